#!/usr/bin/env node
// Installed entry point. The sources are TypeScript run directly by Node 24 (type stripping).
import "../src/cli/main.ts";
