// Reads many pages share (funnel stages, properties, sub-origins, phones, templates), each under its key.
import { contactOrigins } from '@crm-messaging/sdk';
import { useQuery } from '@tanstack/react-query';
import { api } from '../api/client.ts';
import { keys } from '../api/keys.ts';

export const useFunnelStages = () =>
  useQuery({ queryKey: keys.funnelStages.list(), queryFn: () => api.funnelStages.list(), staleTime: 60_000 });
export const useProperties = () =>
  useQuery({ queryKey: keys.properties.list(), queryFn: () => api.properties.list(), staleTime: 60_000 });
export const useSubOrigins = () =>
  useQuery({ queryKey: keys.subOrigins.list(), queryFn: () => api.subOrigins.list(), staleTime: 60_000 });
export const usePhones = () =>
  useQuery({ queryKey: keys.phones.list(), queryFn: () => api.channels.phones(), staleTime: 60_000 });

export const ORIGINS = contactOrigins;
