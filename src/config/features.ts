import type { PortFeatures } from '../model/ports';
import type { UyuniConfig } from './schema';

/** The switches of the port table that a configuration turns on. */
export function portFeatures(config: UyuniConfig): PortFeatures {
  return {
    tftpService: config.tftp.enabled && !config.tftp.hostNetwork,
    debugJava: config.debugJava,
    monitoring: config.monitoring,
    hubApi: config.hubApi.replicas > 0,
  };
}
