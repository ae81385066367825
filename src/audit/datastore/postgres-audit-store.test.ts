import { describeAuditStoreConformance } from "./conformance.ts";
import { PostgresAuditStore } from "./postgres-audit-store.ts";
import { POSTGRES_MISSING, postgresAvailable, startTestPostgres } from "./testing-postgres.ts";

describeAuditStoreConformance(
  "PostgreSQL",
  async () => {
    const server = (await startTestPostgres())!;
    const store = new PostgresAuditStore({ connectionString: server.connectionString });
    return {
      store,
      async cleanup() {
        await store.close();
        await server.stop();
      },
    };
  },
  () => (postgresAvailable() ? undefined : POSTGRES_MISSING),
);
