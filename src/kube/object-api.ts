/**
 * client-node's generic object API (`KubernetesObjectApi`: read, list, create, patch, delete of any
 * kind by its apiVersion and kind) on our connection: its requests go through the bounded
 * transport with the credentials of the moment, and each answer is parsed once, into the JSON
 * the API sent (not client-node's model classes, whose Dates would need converting back).
 */
import { KubernetesObject, KubernetesObjectApi, RequestContext, V1APIResource, V1APIResourceList } from '@kubernetes/client-node';
import type { KubeClient } from './connection';

export class ObjectApi extends KubernetesObjectApi {
  constructor(readonly client: KubeClient) {
    super(client.configuration);
  }

  /** Every request of the object API: our transport, our credentials, one parse. */
  protected override requestPromise<T extends KubernetesObject>(ctx: RequestContext): Promise<T> {
    return this.client.send<T>(ctx);
  }

  /**
   * Discovery of one kind: the group version's resource list, asked once per process (client-node
   * does the same, but rewrites the message of the error it meets).
   */
  protected override async resource(apiVersion: string, kind: string): Promise<V1APIResource | undefined> {
    const known = this.apiVersionResourceCache[apiVersion]?.resources.find((r) => r.kind === kind);
    if (known) return known;
    const list = await this.client.request<V1APIResourceList>('GET', this.apiVersionPath(apiVersion));
    this.apiVersionResourceCache[apiVersion] = list;
    return list.resources.find((r) => r.kind === kind);
  }
}
