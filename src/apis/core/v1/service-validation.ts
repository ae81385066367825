// Validation of a Service (pkg/apis/core/validation ValidateService and ValidateServiceUpdate), on the defaulted
// object. Messages follow upstream.

import { isIP } from "node:net";
import { type FieldError, fieldError } from "../../../apimachinery/field-errors.ts";
import { validateDns1123Label, validateDns1123Subdomain, validateLabels } from "../../../apimachinery/names.ts";
import { SERVICE_TYPES, type Service, type ServicePort } from "./service-schema.ts";
import {
  goStrings,
  IP_DETAIL,
  validateDns1035Label,
  validatePortName,
  validatePortNumber,
  validateProtocol,
} from "./validation.ts";

const SESSION_AFFINITIES = ["ClientIP", "None"] as const;
const TRAFFIC_POLICIES = ["Cluster", "Local"] as const;
const IP_FAMILIES = ["IPv4", "IPv6"] as const;
const IP_FAMILY_POLICIES = ["PreferDualStack", "RequireDualStack", "SingleStack"] as const;

/** An Invalid error whose value is a list of IPs, printed as upstream does. */
export function invalidIps(field: string, ips: string[], detail: string): FieldError {
  return { type: "FieldValueInvalid", field, badValueText: goStrings(ips), detail };
}

const oneOf = (values: readonly string[], value: unknown) => (values as readonly unknown[]).includes(value);

export function validateService(service: Service): FieldError[] {
  const errs: FieldError[] = [];
  const spec = service.spec ?? {};
  const name = service.metadata.name;
  if (name)
    for (const detail of validateDns1035Label(name)) errs.push(fieldError.invalid("metadata.name", name, detail));

  const type = spec.type;
  if (!oneOf(SERVICE_TYPES, type)) {
    errs.push(fieldError.notSupported("spec.type", type ?? "", SERVICE_TYPES));
    return errs;
  }
  const headless = spec.clusterIP === "None";
  const nodePorts = type === "NodePort" || type === "LoadBalancer";

  if (type === "ExternalName") {
    const external = spec.externalName ?? "";
    if (!external) errs.push(fieldError.required("spec.externalName"));
    else {
      for (const detail of validateDns1123Subdomain(external.replace(/\.$/, ""))) {
        errs.push(fieldError.invalid("spec.externalName", external, detail));
      }
    }
    if (spec.clusterIP || spec.clusterIPs?.length) {
      errs.push(fieldError.forbidden("spec.clusterIPs", "may not be set for ExternalName services"));
    }
  } else {
    if (spec.externalName) {
      errs.push(fieldError.forbidden("spec.externalName", "may only be set when `type` is 'ExternalName'"));
    }
    if ((spec.ports ?? []).length === 0 && !headless) errs.push(fieldError.required("spec.ports"));
    errs.push(...validateClusterIPs(service));
  }
  if (headless && nodePorts) {
    errs.push(fieldError.invalid("spec.clusterIPs[0]", "None", `may not be set to 'None' for ${type} services`));
  }

  errs.push(...validatePorts(spec.ports ?? [], type ?? ""));
  if (spec.selector !== undefined) errs.push(...validateLabels(spec.selector, "spec.selector"));

  if (!oneOf(SESSION_AFFINITIES, spec.sessionAffinity)) {
    errs.push(fieldError.notSupported("spec.sessionAffinity", spec.sessionAffinity ?? "", SESSION_AFFINITIES));
  }
  const timeout = spec.sessionAffinityConfig?.clientIP?.timeoutSeconds;
  if (spec.sessionAffinity === "ClientIP") {
    if (timeout === undefined || timeout < 1 || timeout > 86400) {
      errs.push(
        fieldError.invalid(
          "spec.sessionAffinityConfig.clientIP.timeoutSeconds",
          timeout ?? 0,
          "must be greater than 0 and less than 86400",
        ),
      );
    }
  } else if (spec.sessionAffinityConfig) {
    errs.push(
      fieldError.forbidden(
        "spec.sessionAffinityConfig",
        `must not be set when session affinity is ${spec.sessionAffinity ?? "None"}`,
      ),
    );
  }

  (spec.externalIPs ?? []).forEach((ip, i) => {
    if (!isIP(ip)) errs.push(fieldError.invalid(`spec.externalIPs[${i}]`, ip, IP_DETAIL));
  });

  if (spec.externalTrafficPolicy !== undefined) {
    if (!nodePorts && !(spec.externalIPs ?? []).length) {
      errs.push(
        fieldError.invalid(
          "spec.externalTrafficPolicy",
          spec.externalTrafficPolicy,
          "may only be set for externally-accessible services",
        ),
      );
    } else if (!oneOf(TRAFFIC_POLICIES, spec.externalTrafficPolicy)) {
      errs.push(fieldError.notSupported("spec.externalTrafficPolicy", spec.externalTrafficPolicy, TRAFFIC_POLICIES));
    }
  }
  if (spec.internalTrafficPolicy !== undefined && !oneOf(TRAFFIC_POLICIES, spec.internalTrafficPolicy)) {
    errs.push(fieldError.notSupported("spec.internalTrafficPolicy", spec.internalTrafficPolicy, TRAFFIC_POLICIES));
  }

  if (type !== "LoadBalancer") {
    for (const field of ["loadBalancerSourceRanges", "allocateLoadBalancerNodePorts", "loadBalancerClass"] as const) {
      const value = spec[field];
      if (value !== undefined && !(Array.isArray(value) && value.length === 0)) {
        errs.push(fieldError.forbidden(`spec.${field}`, "may only be used when `type` is 'LoadBalancer'"));
      }
    }
  }
  (spec.loadBalancerSourceRanges ?? []).forEach((range, i) => {
    if (!isCidr(range)) {
      errs.push(
        fieldError.invalid(
          `spec.loadBalancerSourceRanges[${i}]`,
          range,
          "must be a list of IP ranges. For example, 10.240.0.0/24,10.250.0.0/24 ",
        ),
      );
    }
  });
  if (spec.healthCheckNodePort !== undefined && !(type === "LoadBalancer" && spec.externalTrafficPolicy === "Local")) {
    errs.push(
      fieldError.invalid(
        "spec.healthCheckNodePort",
        spec.healthCheckNodePort,
        "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'",
      ),
    );
  }

  (spec.ipFamilies ?? []).forEach((family, i) => {
    if (!oneOf(IP_FAMILIES, family)) errs.push(fieldError.notSupported(`spec.ipFamilies[${i}]`, family, IP_FAMILIES));
  });
  if (spec.ipFamilyPolicy !== undefined && !oneOf(IP_FAMILY_POLICIES, spec.ipFamilyPolicy)) {
    errs.push(fieldError.notSupported("spec.ipFamilyPolicy", spec.ipFamilyPolicy, IP_FAMILY_POLICIES));
  }
  return errs;
}

function validateClusterIPs(service: Service): FieldError[] {
  const spec = service.spec ?? {};
  const errs: FieldError[] = [];
  const ips = spec.clusterIPs ?? [];
  if (spec.clusterIP && ips.length > 0 && ips[0] !== spec.clusterIP) {
    errs.push(invalidIps("spec.clusterIPs", ips, "first value must match `clusterIP`"));
  }
  if (ips.length > 2) errs.push(invalidIps("spec.clusterIPs", ips, "may be at most 2 IPs"));
  ips.forEach((ip, i) => {
    if (ip === "None") {
      if (i > 0 || ips.length > 1) {
        errs.push(fieldError.invalid(`spec.clusterIPs[${i}]`, ip, "'None' must be the first and only value"));
      }
      return;
    }
    if (!isIP(ip))
      errs.push(fieldError.invalid(`spec.clusterIPs[${i}]`, ip, "must be empty, 'None', or a valid IP address"));
  });
  if (ips.length === 2 && isIP(ips[0]) && isIP(ips[0]) === isIP(ips[1])) {
    errs.push(invalidIps("spec.clusterIPs", ips, "may specify no more than one IP for each IP family"));
  }
  return errs;
}

function validatePorts(ports: ServicePort[], type: string): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  const nodePorts = new Set<string>();
  ports.forEach((port, i) => {
    const path = `spec.ports[${i}]`;
    if (ports.length > 1 && !port.name) errs.push(fieldError.required(`${path}.name`));
    else if (port.name) {
      for (const detail of validateDns1123Label(port.name))
        errs.push(fieldError.invalid(`${path}.name`, port.name, detail));
      if (names.has(port.name)) errs.push(fieldError.duplicate(`${path}.name`, port.name));
      names.add(port.name);
    }
    errs.push(...validatePortNumber(port.port, `${path}.port`));
    errs.push(...validateProtocol(port.protocol, `${path}.protocol`));
    const target = port.targetPort;
    if (typeof target === "number") errs.push(...validatePortNumber(target, `${path}.targetPort`));
    else if (typeof target === "string") {
      for (const detail of validatePortName(target))
        errs.push(fieldError.invalid(`${path}.targetPort`, target, detail));
    }
    if (port.nodePort !== undefined && port.nodePort !== 0) {
      if (type !== "NodePort" && type !== "LoadBalancer") {
        errs.push(fieldError.forbidden(`${path}.nodePort`, `may not be used when \`type\` is '${type}'`));
      } else {
        const key = `${port.nodePort}/${port.protocol}`;
        if (nodePorts.has(key)) errs.push(fieldError.duplicate(`${path}.nodePort`, port.nodePort));
        nodePorts.add(key);
      }
    }
  });
  return errs;
}

/** Changes a Service may not make (ValidateServiceUpdate): a cluster IP, once set, stays. */
export function validateServiceUpdate(service: Service, old: Service): FieldError[] {
  const errs: FieldError[] = [];
  const type = service.spec?.type;
  const oldType = old.spec?.type;
  if (type === "ExternalName" || oldType === "ExternalName") return errs;
  const oldIps = old.spec?.clusterIPs ?? (old.spec?.clusterIP ? [old.spec.clusterIP] : []);
  const ips = service.spec?.clusterIPs ?? [];
  for (let i = 0; i < Math.min(oldIps.length, ips.length); i++) {
    if (oldIps[i] !== ips[i]) {
      errs.push(invalidIps(`spec.clusterIPs[${i}]`, ips, "may not change once set"));
    }
  }
  if (oldIps.length > 0 && ips.length === 0) {
    errs.push(invalidIps("spec.clusterIPs[0]", ips, "primary clusterIP can not be unset"));
  }
  return errs;
}

function isCidr(value: string): boolean {
  const [ip, bits, ...rest] = value.split("/");
  const family = isIP(ip);
  if (!family || rest.length > 0 || !/^\d+$/.test(bits ?? "")) return false;
  return Number(bits) <= (family === 4 ? 32 : 128);
}
