/**
 * The instance's public configuration (GET /config, §2.11) in the query cache: the app reads it
 * once at sign-in (App.tsx puts it there) and again after the settings screen saves a change
 * (fetchConfig), so every screen sees the same agents, models and security.
 */
import { useQuery } from '@tanstack/react-query';
import { api } from '../api/client';
import { keys, queryClient } from '../api/query-client';
import type { Agent, PublicConfig } from '../api/types';

const read = () => api.config();

export function useConfig(): PublicConfig {
  const { data } = useQuery({ queryKey: keys.config(), queryFn: read });
  if (!data) throw new Error('useConfig outside the signed-in app');
  return data;
}

/** GET /config read now, into the cache. */
export const fetchConfig = (): Promise<PublicConfig> =>
  queryClient.fetchQuery({ queryKey: keys.config(), queryFn: read, staleTime: 0 });

/** A configuration read elsewhere (App's access check), into the cache. */
export const putConfig = (config: PublicConfig): void => void queryClient.setQueryData(keys.config(), config);

export const agentName = (config: PublicConfig, agentId: string): string =>
  config.agents.find((a: Agent) => a.id === agentId)?.name ?? agentId;
