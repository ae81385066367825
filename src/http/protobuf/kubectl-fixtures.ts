// Request bodies kubectl v1.32.4 sent (captured once with -v=9 against a throwaway `virtualcluster apiserver`),
// as hex. Each is the enveloped protobuf of the object `kubectl <command>` creates; the unit tests decode them and
// compare with the JSON the same command means, which pins the field numbers of the tables to real clients.

export interface KubectlFixture {
  command: string;
  path: string;
  hex: string;
}

export const kubectlFixtures = {
  namespace: {
    command: "create namespace team-a",
    path: "/api/v1/namespaces?fieldManager=kubectl-create&fieldValidation=Strict",
    hex:
      "6b3873000a0f0a02763112094e616d657370616365121e0a160a067465616d2d6112001a0022002a0032003800420012" +
      "001a020a001a002200",
  },
  secret: {
    command:
      "create secret generic creds -n default --from-literal=username=admin --from-literal=password=s3cr=t --type=Opaque",
    path: "/api/v1/namespaces/default/secrets?fieldManager=kubectl-create&fieldValidation=Strict",
    hex:
      "6b3873000a0c0a0276311206536563726574124d0a1c0a05637265647312001a0764656661756c7422002a0032003800" +
      "420012120a0870617373776f72641206733363723d7412110a08757365726e616d65120561646d696e1a064f70617175" +
      "651a002200",
  },
  dockerRegistrySecret: {
    command:
      "create secret docker-registry reg -n default --docker-server=r.example.com --docker-username=u --docker-password=p",
    path: "/api/v1/namespaces/default/secrets?fieldManager=kubectl-create&fieldValidation=Strict",
    hex:
      "6b3873000a0c0a0276311206536563726574129c010a1a0a0372656712001a0764656661756c7422002a003200380042" +
      "00125e0a112e646f636b6572636f6e6669676a736f6e12497b226175746873223a7b22722e6578616d706c652e636f6d" +
      "223a7b22757365726e616d65223a2275222c2270617373776f7264223a2270222c2261757468223a2264547077227d7d" +
      "7d1a1e6b756265726e657465732e696f2f646f636b6572636f6e6669676a736f6e1a002200",
  },
  configmap: {
    command:
      "create configmap settings -n default --from-literal=color=blue --from-literal=size=10 --from-file=blob=blob.dat",
    path: "/api/v1/namespaces/default/configmaps?fieldManager=kubectl-create&fieldValidation=Strict",
    hex:
      "6b3873000a0f0a0276311209436f6e6669674d6170124f0a1f0a0873657474696e677312001a0764656661756c742200" +
      "2a00320038004200120d0a05636f6c6f721204626c7565120a0a0473697a65120231301a110a04626c6f6212090001ff" +
      "62696e6172791a002200",
  },
  serviceaccount: {
    command: "create serviceaccount builder -n default",
    path: "/api/v1/namespaces/default/serviceaccounts?fieldManager=kubectl-create&fieldValidation=Strict",
    hex:
      "6b3873000a140a027631120e536572766963654163636f756e7412200a1e0a076275696c64657212001a076465666175" +
      "6c7422002a003200380042001a002200",
  },
  clusterIpService: {
    command: "create service clusterip web -n default --tcp=80:8080 --tcp=443:https",
    path: "/api/v1/namespaces/default/services?fieldManager=kubectl-create&fieldValidation=Strict",
    hex:
      "6b3873000a0d0a0276311207536572766963651294010a260a0377656212001a0764656661756c7422002a0032003800" +
      "42005a0a0a03617070120377656212660a1b0a0738302d38303830120354435018502207080010903f1a0028000a220a" +
      "093434332d6874747073120354435018bb03220b080110001a0568747470732800120a0a0361707012037765621a0022" +
      "09436c757374657249503a00420052005a00600068001a020a001a002200",
  },
  headlessService: {
    command: "create service clusterip headless -n default --clusterip=None",
    path: "/api/v1/namespaces/default/services?fieldManager=kubectl-create&fieldValidation=Strict",
    hex:
      "6b3873000a0d0a02763112075365727669636512660a300a08686561646c65737312001a0764656661756c7422002a00" +
      "3200380042005a0f0a036170701208686561646c657373122e120f0a036170701208686561646c6573731a044e6f6e65" +
      "2209436c757374657249503a00420052005a00600068001a020a001a002200",
  },
  nodePortService: {
    command: "create service nodeport np -n default --tcp=80:8080 --node-port=30080",
    path: "/api/v1/namespaces/default/services?fieldManager=kubectl-create&fieldValidation=Strict",
    hex:
      "6b3873000a0d0a027631120753657276696365126e0a240a026e7012001a0764656661756c7422002a00320038004200" +
      "5a090a0361707012026e7012420a1d0a0738302d38303830120354435018502207080010903f1a002880eb0112090a03" +
      "61707012026e701a0022084e6f6465506f72743a00420052005a00600068001a020a001a002200",
  },
  externalNameService: {
    command: "create service externalname ext -n default --external-name=example.com",
    path: "/api/v1/namespaces/default/services?fieldManager=kubectl-create&fieldValidation=Strict",
    hex:
      "6b3873000a0d0a02763112075365727669636512610a260a0365787412001a0764656661756c7422002a003200380042" +
      "005a0a0a0361707012036578741233120a0a0361707012036578741a00220c45787465726e616c4e616d653a00420052" +
      "0b6578616d706c652e636f6d5a00600068001a020a001a002200",
  },
  role: {
    command:
      "create role reader -n default --verb=get,list --verb=watch --resource=secrets,configmaps --resource-name=a --resource-name=b",
    path: "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles?fieldManager=kubectl-create&fieldValidation=Strict",
    hex:
      "6b3873000a240a1c726261632e617574686f72697a6174696f6e2e6b38732e696f2f76311204526f6c6512500a1d0a06" +
      "72656164657212001a0764656661756c7422002a00320038004200122f0a036765740a046c6973740a05776174636812" +
      "001a07736563726574731a0a636f6e6669676d6170732201612201621a002200",
  },
  rolebinding: {
    command:
      "create rolebinding reader-binding -n default --role=reader --user=alice --group=devs --serviceaccount=default:builder",
    path: "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings?fieldManager=kubectl-create&fieldValidation=Strict",
    hex:
      "6b3873000a2b0a1c726261632e617574686f72697a6174696f6e2e6b38732e696f2f7631120b526f6c6542696e64696e" +
      "6712d0010a250a0e7265616465722d62696e64696e6712001a0764656661756c7422002a00320038004200122a0a0455" +
      "7365721219726261632e617574686f72697a6174696f6e2e6b38732e696f1a05616c6963652200122a0a0547726f7570" +
      "1219726261632e617574686f72697a6174696f6e2e6b38732e696f1a0464657673220012240a0e536572766963654163" +
      "636f756e7412001a076275696c646572220764656661756c741a290a19726261632e617574686f72697a6174696f6e2e" +
      "6b38732e696f1204526f6c651a067265616465721a002200",
  },
  clusterrole: {
    command: "create clusterrole healthz --verb=get --non-resource-url=/healthz",
    path: "/apis/rbac.authorization.k8s.io/v1/clusterroles?fieldManager=kubectl-create&fieldValidation=Strict",
    hex:
      "6b3873000a2b0a1c726261632e617574686f72697a6174696f6e2e6b38732e696f2f7631120b436c7573746572526f6c" +
      "65122a0a170a076865616c74687a12001a0022002a00320038004200120f0a036765742a082f6865616c74687a1a0022" +
      "00",
  },
  aggregatedClusterRole: {
    command: "create clusterrole aggregated --aggregation-rule=rbac.example.com/aggregate-to-x=true",
    path: "/apis/rbac.authorization.k8s.io/v1/clusterroles?fieldManager=kubectl-create&fieldValidation=Strict",
    hex:
      "6b3873000a2b0a1c726261632e617574686f72697a6174696f6e2e6b38732e696f2f7631120b436c7573746572526f6c" +
      "6512490a1a0a0a6167677265676174656412001a0022002a003200380042001a2b0a290a270a1f726261632e6578616d" +
      "706c652e636f6d2f6167677265676174652d746f2d781204747275651a002200",
  },
  clusterrolebinding: {
    command: "create clusterrolebinding healthz-binding --clusterrole=healthz --user=bob",
    path: "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings?fieldManager=kubectl-create&fieldValidation=Strict",
    hex:
      "6b3873000a320a1c726261632e617574686f72697a6174696f6e2e6b38732e696f2f76311212436c7573746572526f6c" +
      "6542696e64696e67127e0a1f0a0f6865616c74687a2d62696e64696e6712001a0022002a0032003800420012280a0455" +
      "7365721219726261632e617574686f72697a6174696f6e2e6b38732e696f1a03626f6222001a310a19726261632e6175" +
      "74686f72697a6174696f6e2e6b38732e696f120b436c7573746572526f6c651a076865616c74687a1a002200",
  },
  canI: {
    command: "auth can-i get secrets -n default --subresource=status",
    path: "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
    hex:
      "6b3873000a320a17617574686f72697a6174696f6e2e6b38732e696f2f7631121753656c665375626a65637441636365" +
      "737352657669657712450a100a0012001a0022002a0032003800420012270a250a0764656661756c7412036765741a00" +
      "22002a077365637265747332067374617475733a001a08080012001a0020001a002200",
  },
  canINonResource: {
    command: "auth can-i get /healthz",
    path: "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
    hex:
      "6b3873000a320a17617574686f72697a6174696f6e2e6b38732e696f2f7631121753656c665375626a65637441636365" +
      "7373526576696577122f0a100a0012001a0022002a003200380042001211120f0a082f6865616c74687a12036765741a" +
      "08080012001a0020001a002200",
  },
  reconcileUpdate: {
    command: "auth reconcile -f rbac.yaml (a ClusterRole gaining a rule: the PUT of the whole stored object)",
    path: "/apis/rbac.authorization.k8s.io/v1/clusterroles/reconciled",
    hex:
      "6b3873000a2b0a1c726261632e617574686f72697a6174696f6e2e6b38732e696f2f7631120b436c7573746572526f6c" +
      "6512ff010aa2010a0a7265636f6e63696c656412001a0022002a2430346363616261322d363765352d346139612d3831" +
      "32642d653036323361616237663131320233373803420808a2db8ad80610008a01570a076b75626563746c1206557064" +
      "6174651a1c726261632e617574686f72697a6174696f6e2e6b38732e696f2f7631220808a5db8ad80610003208466965" +
      "6c647356313a100a0e7b22663a72756c6573223a7b7d7d420012130a0367657412001a0a636f6e6669676d6170731214" +
      "0a046c69737412001a0a636f6e6669676d61707312150a05776174636812001a0a636f6e6669676d61707312160a0663" +
      "726561746512001a0a636f6e6669676d6170731a002200",
  },
} satisfies Record<string, KubectlFixture>;
