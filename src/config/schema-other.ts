// Schemas of the smaller status blocks: the deprecated OIDC server, apps, UI settings, secret store, cloud.

import { array, boolean, object, string, stringList } from "../apimachinery/schema-builders.ts";
import { secret, stringWithDefault } from "./schema-builders.ts";

export const oidcServerSchema = object(
  {
    enabled: boolean("The platform acts as an OIDC server (on by default; does nothing without clients)."),
    wildcardRedirect: boolean('Allow "*" in client redirect URIs.'),
    clients: array(
      object(
        {
          name: string("Name of the client."),
          clientId: string("Client ID."),
          clientSecret: secret("Client secret; without one the client is public and must use PKCE."),
          redirectURIs: stringList(
            'Registered redirect URIs; a redirect must match one exactly (or through "*" with wildcardRedirect). A public client (no secret) without any may redirect to http loopback addresses.',
          ),
        },
        "An OIDC client allowed to request platform tokens.",
      ),
      "Clients allowed to request platform tokens.",
    ),
  },
  "The platform as an OpenID provider for other tools, served at https://<platformHost>/oidc.",
);

export const appsSchema = object(
  {
    noDefault: boolean(
      "Skip parsing the default apps: every chart of the repositories is offered as an app unless this is true (then only predefinedApps are).",
    ),
    refreshInterval: stringWithDefault(
      "How often the repositories' index.yaml are read again, as a Go duration (an addition of this platform).",
      "10m",
    ),
    repositories: array(
      object(
        {
          name: string("Name of the repository."),
          url: string("Address of the chart repository."),
          username: string("User name for the repository."),
          password: secret("Password for the repository."),
          insecure: boolean("Skip TLS verification of the repository."),
        },
        "A chart repository.",
      ),
      "Additional chart repositories.",
    ),
    predefinedApps: array(
      object(
        {
          chart: string("The chart, as repo/chart."),
          initialVersion: string("Version selected initially."),
          initialValues: string("Values prefilled in the UI; may contain UI placeholders."),
          clusters: stringList("Clusters where the app is shown."),
          title: string("Title shown; the chart name when empty."),
          iconUrl: string("Address of the app's icon."),
          readmeUrl: string("Address of the app's readme."),
        },
        "A predefined app.",
      ),
      "Predefined apps offered in the UI.",
    ),
  },
  "Apps shown in the UI.",
);

export const NAV_BAR_POSITIONS = ["TopStart", "TopEnd", "BottomStart", "BottomEnd"] as const;

export const uiSettingsSchema = object(
  {
    platformVersion: string("Platform version shown in the UI."),
    logoURL: string("Address of the logo; must be reachable by UI clients."),
    faviconURL: string("Address of the favicon; must be reachable by UI clients."),
    smallLogoURL: string("Address of the small logo; must be reachable by UI clients."),
    logoBackgroundColor: string("Color behind the logo."),
    primaryColor: string("Primary color."),
    sidebarColor: string("Sidebar color."),
    accentColor: string("Accent color."),
    legalTemplate: string("HTML shown at login."),
    customCss: stringList("Addresses of extra style sheets."),
    customJavaScript: stringList("Addresses of extra scripts."),
    navBarButtons: array(
      object(
        {
          position: stringWithDefault(
            "Where the button sits: TopStart, TopEnd, BottomStart or BottomEnd.",
            "BottomEnd",
            {
              enum: [...NAV_BAR_POSITIONS],
            },
          ),
          text: string("Text of the button."),
          link: string("Address the button opens."),
          icon: string("Address of the button's icon."),
        },
        "A navigation bar button.",
      ),
      "Extra navigation bar buttons.",
    ),
    externalURLs: object(
      {
        block: boolean("Block calls from the UI to addresses not in allow."),
        allow: stringList("Addresses (or predefined module names) the UI may call; effective only when block is true."),
      },
      "Which external addresses the UI may call.",
    ),
  },
  "Settings of the user interface.",
);

export const secretStoreSchema = object(
  {
    enabled: boolean("Sync secrets to or from the secret store."),
    address: string("Address of the secret store. Defaults to the environment variable VAULT_ADDR when empty."),
    skipTLSVerify: boolean("Skip TLS verification of the secret store."),
    namespace: string("Namespace in the secret store."),
    auth: object(
      {
        token: secret("Token for the secret store."),
        tokenSecretRef: object(
          {
            name: string("Name of the Secret."),
            key: string("Key in the Secret's data holding the token."),
            optional: boolean("Whether the Secret or its key must exist."),
          },
          "Secret holding the token under the key `token`; used when token is empty.",
        ),
      },
      "How to authenticate to the secret store.",
    ),
    syncInterval: stringWithDefault('How often to sync, as a Go duration ("30s", "1m", "1h30m").', "1m"),
    mount: stringWithDefault(
      "Path of the KV version 2 secrets engine in the store (an addition of this platform).",
      "secret",
    ),
    pathPrefix: stringWithDefault(
      "Folder under the mount holding the platform's secrets, as <pathPrefix>/projects/<project>/<secret> (an addition of this platform).",
      "virtualcluster-platform",
    ),
  },
  "Secret store integration.",
);

export const cloudSchema = object(
  {
    releaseChannel: string("Release channel."),
    maintenanceWindow: object(
      {
        dayOfWeek: string("Weekday of the window: Sunday, Monday, ... Saturday."),
        timeWindow: string('Time range in UTC on a 24-hour clock, "HH:MM-HH:MM"; may cross midnight.'),
      },
      "When maintenance may happen.",
    ),
  },
  "Settings for hosted (cloud) deployments.",
);
