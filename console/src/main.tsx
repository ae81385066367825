import "@patternfly/react-core/dist/styles/base.css";
import "./theme.css";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./app.tsx";
import { applyBranding, loadSettings } from "./lib/branding.ts";
import { RouterProvider } from "./lib/router.tsx";

const settings = await loadSettings();
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
