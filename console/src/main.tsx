import "@patternfly/react-core/dist/styles/base.css";
import "./theme.css";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App, prefetchPage } from "./app.tsx";
import { applyBranding, loadSettings } from "./lib/branding.ts";
import { RouterProvider } from "./lib/router.tsx";
import { sessionOnce } from "./lib/session.ts";

// Branding, the session and the page's chunk are fetched together; the first render needs only the branding.
const branding = loadSettings();
const path = window.location.pathname;
if (path !== "/login" && !path.startsWith("/login/")) {
  sessionOnce().catch(() => undefined); // a failure shows when the page asks for it
  prefetchPage(path);
}
const settings = await branding;
applyBranding(settings);
const root = document.getElementById("root");
if (root) {
  createRoot(root).render(
    <StrictMode>
      <RouterProvider>
        <App settings={settings} />
      </RouterProvider>
    </StrictMode>,
  );
}
