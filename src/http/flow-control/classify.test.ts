import assert from "node:assert/strict";
import { it } from "node:test";
import { parseRequestInfo } from "../request-info.ts";
import { isLongRunning } from "./classify.ts";

it("isLongRunning() holds watches, exec, attach, port-forward, proxy and logs as kube-apiserver does; nothing else", () => {
  const longRunning = (method: string, url: string) => isLongRunning(parseRequestInfo(method, url));
  assert.equal(longRunning("GET", "/api/v1/namespaces/a/configmaps?watch=1"), true);
  assert.equal(longRunning("GET", "/api/v1/watch/namespaces/a/pods"), true);
  assert.equal(longRunning("POST", "/api/v1/namespaces/a/pods/p/exec?command=sh"), true);
  assert.equal(longRunning("POST", "/api/v1/namespaces/a/pods/p/attach"), true);
  assert.equal(longRunning("POST", "/api/v1/namespaces/a/pods/p/portforward"), true);
  assert.equal(longRunning("GET", "/api/v1/namespaces/a/pods/p/log?follow=true"), true);
  assert.equal(longRunning("GET", "/api/v1/namespaces/a/services/s/proxy/metrics"), true);
  assert.equal(longRunning("GET", "/api/v1/namespaces/a/configmaps/c"), false);
  assert.equal(longRunning("GET", "/api/v1/namespaces/a/configmaps?watch=false"), false);
  assert.equal(longRunning("POST", "/api/v1/namespaces/a/configmaps?watch=1"), false);
  assert.equal(longRunning("GET", "/apis/apps/v1/namespaces/a/deployments/d/status"), false);
  assert.equal(longRunning("GET", "/version"), false);
});
