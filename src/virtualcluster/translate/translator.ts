import { virtualToHostDNS } from "./dns.ts";
import { labelKeyTranslator } from "./label-keys.ts";
import { hostLabels, type LabelMap, virtualLabels } from "./labels.ts";
import { multiNamespaceNames, type NamespacedName, type ReverseNameLookup, singleNamespaceNames } from "./names.ts";
import { hostSelector, type Selector, virtualSelector } from "./selectors.ts";

export interface TranslatorOptions {
  /** Name of the virtual cluster. */
  name: string;
  /** Host namespace the virtual cluster runs in. */
  namespace: string;
  /** Multi-namespace mode: each virtual namespace maps to its own host namespace and names are kept. */
  multiNamespace?: boolean;
  /** Reverse lookup of host names the syncer created (hashed names cannot be reversed otherwise). */
  lookup?: ReverseNameLookup;
}

/** Everything the syncer and the patch engine need to move names, labels and selectors between the two sides. */
export interface Translator {
  readonly virtualClusterName: string;
  readonly virtualClusterNamespace: string;
  readonly multiNamespace: boolean;
  hostName(name: string, namespace: string): string;
  hostNamespace(namespace: string): string;
  virtualName(hostName: string, hostNamespace: string, virtualNamespaceHint?: string): NamespacedName | undefined;
  hostLabelKey(key: string): string;
  /** undefined for host-only marker labels. */
  virtualLabelKey(key: string): string | undefined;
  hostLabels(labels: LabelMap | undefined, virtualNamespace?: string): LabelMap;
  virtualLabels(labels: LabelMap | undefined): LabelMap;
  hostSelector(selector: unknown, virtualNamespace?: string): Selector;
  virtualSelector(selector: unknown): Selector;
  virtualToHostDNS(dnsName: string): string;
}

export function createTranslator(options: TranslatorOptions): Translator {
  const { name, namespace } = options;
  const names = options.multiNamespace
    ? multiNamespaceNames(name, namespace, options.lookup)
    : singleNamespaceNames(name, namespace, options.lookup);
  const keys = labelKeyTranslator(name);
  const markers = (virtualNamespace?: string) => ({ virtualClusterName: name, virtualNamespace });
  return {
    virtualClusterName: name,
    virtualClusterNamespace: namespace,
    multiNamespace: names.multiNamespace,
    hostName: names.hostName,
    hostNamespace: names.hostNamespace,
    virtualName: names.virtualName,
    hostLabelKey: keys.host,
    virtualLabelKey: keys.virtual,
    hostLabels: (labels, virtualNamespace) => hostLabels(labels, keys, markers(virtualNamespace)),
    virtualLabels: (labels) => virtualLabels(labels, keys),
    hostSelector: (selector, virtualNamespace) => hostSelector(selector, keys, markers(virtualNamespace)),
    virtualSelector: (selector) => virtualSelector(selector, keys),
    virtualToHostDNS: (dnsName) => virtualToHostDNS(dnsName, names),
  };
}
