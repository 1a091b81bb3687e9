// The port's send shapes (camelCase, typed) to the Cloud API's `/{phone_number_id}/messages` wire shapes.

import type { FreeformMessage, SendComponent, SendParameter, TemplateMessage } from '../platform.ts';

export type WireObject = Record<string, unknown>;

export function toWireTemplateMessage(message: TemplateMessage): WireObject {
  const template: WireObject = { name: message.templateName, language: { code: message.language } };
  if (message.components.length > 0) template.components = message.components.map(toWireComponent);
  const wire: WireObject = {
    messaging_product: 'whatsapp',
    recipient_type: 'individual',
    to: toWireRecipient(message.to),
    type: 'template',
    template,
  };
  if (message.callbackData !== undefined) wire.biz_opaque_callback_data = message.callbackData;
  return wire;
}

/**
 * decisions §15: a text (`preview_url`) or a media message by `link` or uploaded media `id` (D294), with `caption`, and
 * `filename` for documents,
 * answering `context.message_id` when it replies to a message.
 */
export function toWireFreeformMessage(message: FreeformMessage): WireObject {
  const wire: WireObject = {
    messaging_product: 'whatsapp',
    recipient_type: 'individual',
    to: toWireRecipient(message.to),
  };
  if (message.replyToPlatformMessageId !== undefined) wire.context = { message_id: message.replyToPlatformMessageId };
  const { body } = message;
  wire.type = body.type;
  if (body.type === 'text') {
    wire.text = body.previewUrl === undefined ? { body: body.text } : { preview_url: body.previewUrl, body: body.text };
  } else {
    // D294: an uploaded file by its media id, else the file by link.
    const media: WireObject = 'mediaId' in body ? { id: body.mediaId } : { link: body.link };
    // The platform takes no caption on audio, and a file name only on documents.
    if (body.caption !== undefined && body.type !== 'audio') media.caption = body.caption;
    if (body.filename !== undefined && body.type === 'document') media.filename = body.filename;
    wire[body.type] = media;
  }
  if (message.callbackData !== undefined) wire.biz_opaque_callback_data = message.callbackData;
  return wire;
}

/** The platform addresses recipients by digits only: `+15551234567` becomes `15551234567`. */
export function toWireRecipient(e164: string): string {
  return e164.replace(/\D/g, '');
}

export function toWireComponent(component: SendComponent): WireObject {
  const wire: WireObject = { type: component.type };
  if (component.subType !== undefined) wire.sub_type = component.subType;
  // The platform documents button indexes as strings ("0"); it is the button's position in the template.
  if (component.index !== undefined) wire.index = String(component.index);
  if (component.parameters !== undefined) wire.parameters = component.parameters.map(toWireParameter);
  if (component.cards !== undefined) {
    wire.cards = component.cards.map((card) => ({
      card_index: card.cardIndex,
      components: card.components.map(toWireComponent),
    }));
  }
  return wire;
}

export function toWireParameter(parameter: SendParameter): WireObject {
  switch (parameter.type) {
    case 'text': {
      const wire: WireObject = { type: 'text', text: parameter.text };
      if (parameter.parameterName !== undefined) wire.parameter_name = parameter.parameterName;
      return wire;
    }
    case 'image':
    case 'video':
    case 'document':
      return { type: parameter.type, [parameter.type]: { link: parameter.link } };
    case 'coupon_code':
      return { type: 'coupon_code', coupon_code: parameter.couponCode };
    case 'limited_time_offer':
      return { type: 'limited_time_offer', limited_time_offer: { expiration_time_ms: parameter.expirationTimeMs } };
    case 'payload':
      return { type: 'payload', payload: parameter.payload };
    case 'action': {
      const action: WireObject = {};
      if (parameter.action.thumbnailProductRetailerId !== undefined) {
        action.thumbnail_product_retailer_id = parameter.action.thumbnailProductRetailerId;
      }
      if (parameter.action.sections !== undefined) {
        action.sections = parameter.action.sections.map((section) => ({
          title: section.title,
          product_items: section.productRetailerIds.map((id) => ({ product_retailer_id: id })),
        }));
      }
      return { type: 'action', action };
    }
  }
}
