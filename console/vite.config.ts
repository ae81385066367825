// Builds the web console into dist/console (npm run build, which npm install runs through "prepare").
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

export default defineConfig({
  root: import.meta.dirname,
  base: "/",
  plugins: [react()],
  build: {
    outDir: "../dist/console",
    emptyOutDir: true,
    assetsDir: "assets",
    sourcemap: false,
    // The pages load on demand; the first load is the shell and the page asked for.
    chunkSizeWarningLimit: 1500,
  },
});
