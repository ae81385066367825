// The pipeline's side of flow control (src/http/flow-control/): classifies a request by the identity it runs as,
// waits for its seat (or answers the 429), and gives the seat back once the answer is complete — written out, so a
// large answer to a slow reader keeps holding it. Also the connection reserve: a request on a connection let in
// above --max-connections must be a health probe or come from a privileged caller. Its connection closes after the
// answer, except a privileged caller's, which stays open for the caller's next requests: while a flood holds the
// server at its cap, an admin that had to reconnect for every request would queue each time behind the flood's
// reconnects at accept (SYNs dropped from a full backlog are retried after 1 s, then 3 s) and pay a handshake.

import type { UserInfo } from "../registry/types.ts";
import { classify, isHealthProbe } from "./flow-control/classify.ts";
import type { ConnectionGate } from "./flow-control/connection-limit.ts";
import type { FlowControl, RequestKind } from "./flow-control/flow-control.ts";
import { refusals } from "./flow-control/refusals.ts";
import type { RequestState } from "./request-state.ts";

export interface RequestFlowOptions {
  flow: FlowControl;
  connections: ConnectionGate;
  /** Callers exempt from flow control and let in on the reserve (system:masters; on the platform, admins). */
  privileged(user: UserInfo): boolean;
}

export interface RequestFlow {
  /** A request on a reserve connection: whatever its answer, the connection closes after it. Asked first. */
  markReserve(state: RequestState): void;
  /**
   * After authentication: on a reserve connection, all but probes and privileged callers get 429; a privileged
   * caller's connection stays open after all.
   */
  checkReserve(state: RequestState, user: UserInfo): void;
  /** Waits for the request's seat (state.flow); throws the 429 of a full queue or a wait too long. */
  admit(state: RequestState, user: UserInfo): void | Promise<void>;
  /** Gives back the request's seat, if it holds one; safe to call more than once. */
  release(state: RequestState): void;
}

const kindOf = (method: string | undefined): RequestKind =>
  method === "GET" || method === "HEAD" ? "readOnly" : "mutating";

/** A body nobody will read would keep the connection until it has all arrived. */
function closeIfBodyUnread(state: RequestState): void {
  const headers = state.raw.headers;
  if (headers["transfer-encoding"] !== undefined || (headers["content-length"] ?? "0") !== "0") {
    state.closeConnection = true;
  }
}

export function createRequestFlow(options: RequestFlowOptions): RequestFlow {
  const { flow, connections, privileged } = options;
  return {
    markReserve(state) {
      if (connections.onReserve(state.raw.socket)) state.closeConnection = true;
    },
    checkReserve(state, user) {
      if (!connections.onReserve(state.raw.socket)) return;
      if (privileged(user)) {
        // Nothing else has asked to close it yet: the steps between markReserve and here throw instead.
        state.closeConnection = false;
        return;
      }
      const info = state.info!;
      if (!info.resourceRequest && isHealthProbe(info.path)) return;
      closeIfBodyUnread(state);
      connections.refusedOnReserve(state.raw.socket);
      throw refusals.connectionReserve();
    },
    admit(state, user) {
      const info = state.info!;
      const classification = classify({
        resourceRequest: info.resourceRequest,
        verb: info.verb,
        path: info.path,
        user,
        privileged: privileged(user),
        remoteAddress: state.raw.socket?.remoteAddress,
      });
      let ticket: ReturnType<FlowControl["admit"]>;
      try {
        const socket = state.raw.socket;
        ticket = flow.admit({
          classification,
          kind: kindOf(state.raw.method),
          connection: socket,
          abort: () => socket?.destroy(),
        });
      } catch (error) {
        closeIfBodyUnread(state);
        throw error;
      }
      if (!(ticket instanceof Promise)) {
        state.flow = ticket;
        return;
      }
      return ticket.then(
        (admitted) => {
          state.flow = admitted;
        },
        (error) => {
          closeIfBodyUnread(state);
          throw error;
        },
      );
    },
    release(state) {
      const ticket = state.flow;
      if (!ticket) return;
      state.flow = undefined;
      ticket.release();
    },
  };
}
