import { createContext, useContext } from 'react';
import type { Agent, PublicConfig } from '../api/types';

export const ConfigContext = createContext<PublicConfig | undefined>(undefined);

export function useConfig(): PublicConfig {
  const config = useContext(ConfigContext);
  if (!config) throw new Error('useConfig outside the signed-in app');
  return config;
}

/** Hands every screen this configuration, or GET /config read again (after the settings screen saved a change). */
export const ConfigRefreshContext = createContext<(config?: PublicConfig) => Promise<void>>(async () => {});
export const useConfigRefresh = () => useContext(ConfigRefreshContext);

export const agentName = (config: PublicConfig, agentId: string): string =>
  config.agents.find((a: Agent) => a.id === agentId)?.name ?? agentId;
