// Machine keys (decisions §6): the rule lives in the SDK, which builds alone, so that the console and the CLI derive
// the very keys the server does (D328). The server imports it from here.
export { KEY_PATTERN, keyFromName, keyVariant, OPTION_KINDS } from '../../sdk/src/property-keys.ts';
