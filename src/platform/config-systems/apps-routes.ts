// The apps catalog over HTTPS (every authenticated caller reads it; src/identity/scope.ts lists the paths):
//   GET /platform/apps                         {kind: AppCatalog, repositories: [...], apps: [...]} (no password)
//   GET /platform/apps/readme?chart=repo/chart[&version=v]   the readme as text/markdown; 404 when there is none

import type { FastifyInstance } from "fastify";
import { errors } from "../../apimachinery/errors.ts";
import type { AppsCatalog } from "../../apps/apps-catalog.ts";

export const APPS_PATH = "/platform/apps";

export function appsRoutes(catalog: AppsCatalog): (app: FastifyInstance) => void {
  return (app) => {
    app.get(APPS_PATH, async (_request, reply) => {
      const view = catalog.view();
      const body = {
        kind: "AppCatalog",
        repositories: view.repositories.map(({ charts, ...repository }) => ({ ...repository, charts: charts.length })),
        charts: view.repositories.flatMap((repository) =>
          repository.charts.map((chart) => ({
            repository: repository.name,
            name: chart.name,
            description: chart.description,
            versions: chart.versions.map((v) => ({ version: v.version, appVersion: v.appVersion, created: v.created })),
          })),
        ),
        apps: view.apps,
      };
      return reply
        .code(200)
        .header("content-type", "application/json")
        .header("cache-control", "no-store")
        .send(JSON.stringify(body));
    });
    app.get(`${APPS_PATH}/readme`, async (request, reply) => {
      const query = request.query as { chart?: unknown; version?: unknown };
      const chart = typeof query.chart === "string" ? query.chart : "";
      if (!/^[^/\s]+\/[^/\s]+$/.test(chart)) throw errors.badRequest("give the app as ?chart=<repository>/<chart>");
      const version = typeof query.version === "string" && query.version ? query.version : undefined;
      let text: string | undefined;
      try {
        text = await catalog.readme(chart, version);
      } catch (error) {
        throw errors.serviceUnavailable(`the readme of ${chart} could not be read: ${(error as Error).message}`);
      }
      if (text === undefined) throw errors.notFoundMessage(`${chart} has no readme`);
      return reply
        .code(200)
        .header("content-type", "text/markdown; charset=utf-8")
        .header("cache-control", "no-store")
        .send(text);
    });
  };
}
