// The console's shell: the login page, or the signed-in layout (masthead with logo, nav bar buttons and the user
// menu; the sidebar with the pages the caller may use) around the page of the path, loaded on demand.

import {
  Button,
  Dropdown,
  DropdownItem,
  DropdownList,
  Masthead,
  MastheadBrand,
  MastheadContent,
  MastheadMain,
  MastheadToggle,
  MenuToggle,
  Nav,
  NavItem,
  NavList,
  Page,
  PageSidebar,
  PageSidebarBody,
  PageToggleButton,
  SkipToContent,
  Toolbar,
  ToolbarContent,
  ToolbarGroup,
  ToolbarItem,
} from "@patternfly/react-core";
import { type ComponentType, type ReactNode, useEffect, useState } from "react";
import { ErrorAlert, Loading } from "./components/common.tsx";
import { mgmt } from "./lib/api.ts";
import type { ConsoleSettings, NavBarButton } from "./lib/branding.ts";
import { Link, navigate, usePath } from "./lib/router.tsx";
import { logout, type Session, SessionContext, sessionOnce } from "./lib/session.ts";
import { primeList } from "./lib/use-watch-list.ts";
import { LoginPage } from "./pages/login.tsx";

// Each page is its own chunk, loaded when first shown; main.tsx starts the first one's download with the session.
// Pages are rendered directly once loaded (no React.lazy: its Suspense reveal is throttled, which cost the first
// page a few hundred milliseconds).
// biome-ignore lint/suspicious/noExplicitAny: pages take different props
type PageModule = { default: ComponentType<any> };
const loadedPages = new Map<() => Promise<PageModule>, ComponentType<{ rest: string[] }>>();
function loadPage(loader: () => Promise<PageModule>): Promise<void> {
  return loader().then((module) => {
    loadedPages.set(loader, module.default);
  });
}

interface Section {
  path: string;
  title: string;
  show: (session: Session) => boolean;
  load: () => Promise<PageModule>;
}

const SECTIONS: Section[] = [
  { path: "/", title: "Overview", show: () => true, load: () => import("./pages/overview.tsx") },
  { path: "/projects", title: "Projects", show: () => true, load: () => import("./pages/projects.tsx") },
  { path: "/users", title: "Users", show: (s) => s.can("list", "users"), load: () => import("./pages/users.tsx") },
  {
    path: "/teams",
    title: "Teams",
    show: (s) => s.can("list", "teams") || s.teams.length > 0,
    load: () => import("./pages/teams.tsx"),
  },
  {
    path: "/clusters",
    title: "Clusters",
    show: (s) => s.can("list", "clusters"),
    load: () => import("./pages/clusters.tsx"),
  },
  { path: "/access-keys", title: "Access Keys", show: () => true, load: () => import("./pages/access-keys.tsx") },
  { path: "/config", title: "Config", show: (s) => s.can("get", "configs"), load: () => import("./pages/config.tsx") },
  {
    path: "/audit",
    title: "Audit",
    show: (s) => s.can("list", "auditevents"),
    load: () => import("./pages/audit.tsx"),
  },
  { path: "/profile", title: "Profile", show: () => false, load: () => import("./pages/profile.tsx") },
];

const under = (path: string, section: string) =>
  path === section || (section !== "/" && path.startsWith(`${section}/`));
const sectionAt = (path: string) => SECTIONS.find((s) => under(path, s.path));

/** Starts loading the chunk of the page at `path` (before the session is known). */
export function prefetchPage(path: string): void {
  // The lists a page shows first, asked together with the session (see primeList).
  if (path === "/users") {
    primeList(mgmt("users"));
    primeList(mgmt("teams"));
  }
  if (path === "/" || path === "/projects") primeList(mgmt("projects"));
  const section = sectionAt(path);
  if (section) loadPage(section.load).catch(() => undefined);
}

function NavButtons({ buttons, className }: { buttons: NavBarButton[]; className?: string }) {
  if (buttons.length === 0) return null;
  return (
    <div className={`vcp-nav-buttons ${className ?? ""}`}>
      {buttons.map((button) => (
        <Button
          key={`${button.text}-${button.link}`}
          component="a"
          href={button.link}
          target="_blank"
          rel="noopener noreferrer"
          variant="link"
          className="vcp-nav-button"
          icon={button.icon ? <img src={button.icon} alt="" /> : undefined}
        >
          {button.text || button.link}
        </Button>
      ))}
    </div>
  );
}

function Logo({ settings }: { settings: ConsoleSettings }) {
  return (
    <Link to="/" aria-label="Virtual Cluster Platform home">
      <span className="vcp-logo">
        {settings.logoURL ? (
          <picture>
            {settings.smallLogoURL && <source media="(max-width: 768px)" srcSet={settings.smallLogoURL} />}
            <img src={settings.logoURL} alt="Virtual Cluster Platform" />
          </picture>
        ) : (
          "Virtual Cluster Platform"
        )}
      </span>
    </Link>
  );
}

function UserMenu({ session }: { session: Session }) {
  const [open, setOpen] = useState(false);
  return (
    <Dropdown
      isOpen={open}
      onOpenChange={setOpen}
      popperProps={{ position: "right" }}
      toggle={(ref) => (
        <MenuToggle ref={ref} onClick={() => setOpen(!open)} isExpanded={open}>
          {session.displayName || session.username || session.user}
        </MenuToggle>
      )}
    >
      <DropdownList>
        <DropdownItem key="profile" onClick={() => navigate("/profile")}>
          Profile
        </DropdownItem>
        <DropdownItem key="keys" onClick={() => navigate("/access-keys")}>
          Access Keys
        </DropdownItem>
        <DropdownItem key="logout" onClick={() => void logout()}>
          Log out
        </DropdownItem>
      </DropdownList>
    </Dropdown>
  );
}

/** PatternFly hides a collapsed sidebar with aria-hidden only; inert also takes its links out of the tab order. */
function useInertCollapsedSidebar() {
  useEffect(() => {
    const sidebar = document.getElementById("page-sidebar");
    if (!sidebar) return;
    const sync = () => {
      sidebar.inert = sidebar.getAttribute("aria-hidden") === "true";
    };
    sync();
    const observer = new MutationObserver(sync);
    observer.observe(sidebar, { attributes: true, attributeFilter: ["aria-hidden"] });
    return () => observer.disconnect();
  }, []);
}

function Layout({ session, settings, children }: { session: Session; settings: ConsoleSettings; children: ReactNode }) {
  const path = usePath();
  useInertCollapsedSidebar();
  const at = (position: NavBarButton["position"]) => settings.navBarButtons.filter((b) => b.position === position);
  const masthead = (
    <Masthead>
      <MastheadMain>
        <MastheadToggle>
          <PageToggleButton isHamburgerButton aria-label="Main navigation" />
        </MastheadToggle>
        <MastheadBrand>
          <Logo settings={settings} />
        </MastheadBrand>
      </MastheadMain>
      <MastheadContent>
        <Toolbar isFullHeight>
          <ToolbarContent>
            <ToolbarGroup>
              <ToolbarItem>
                <NavButtons buttons={at("TopStart")} className="vcp-top-start" />
              </ToolbarItem>
            </ToolbarGroup>
            <ToolbarGroup align={{ default: "alignEnd" }}>
              <ToolbarItem>
                <NavButtons buttons={at("TopEnd")} className="vcp-top-end" />
              </ToolbarItem>
              <ToolbarItem>
                <UserMenu session={session} />
              </ToolbarItem>
            </ToolbarGroup>
          </ToolbarContent>
        </Toolbar>
      </MastheadContent>
    </Masthead>
  );
  const sidebar = (
    <PageSidebar>
      <PageSidebarBody>
        <Nav aria-label="Console">
          <NavList>
            {SECTIONS.filter((section) => section.show(session)).map((section) => (
              <NavItem
                key={section.path}
                isActive={under(path, section.path)}
                to={section.path}
                onClick={(event) => {
                  event.preventDefault();
                  navigate(section.path);
                }}
              >
                {section.title}
              </NavItem>
            ))}
          </NavList>
        </Nav>
      </PageSidebarBody>
      <PageSidebarBody isFilled={false}>
        <div className="vcp-sidebar-footer">
          <NavButtons buttons={at("BottomStart")} className="vcp-bottom-start" />
          <NavButtons buttons={at("BottomEnd")} className="vcp-bottom-end" />
          <small className="vcp-version">Version {settings.platformVersion}</small>
        </div>
      </PageSidebarBody>
    </PageSidebar>
  );
  return (
    <Page
      masthead={masthead}
      sidebar={sidebar}
      isManagedSidebar
      skipToContent={<SkipToContent href="#main">Skip to content</SkipToContent>}
      mainContainerId="main"
    >
      {children}
    </Page>
  );
}

function SignedIn({ settings }: { settings: ConsoleSettings }) {
  const path = usePath();
  const [session, setSession] = useState<Session>();
  const [error, setError] = useState<unknown>();
  const [, pageLoaded] = useState(0);
  useEffect(() => {
    // The first page's chunk is on its way already (prefetchPage): render once both are here.
    const first = sectionAt(window.location.pathname);
    Promise.all([sessionOnce(), first ? loadPage(first.load).catch(() => undefined) : undefined]).then(
      ([loaded]) => setSession(loaded),
      setError,
    );
  }, []);
  const section = session && SECTIONS.find((s) => (s.show(session) || s.path === "/profile") && s === sectionAt(path));
  const Page = section && loadedPages.get(section.load);
  useEffect(() => {
    if (section && !Page) loadPage(section.load).then(() => pageLoaded((n) => n + 1), setError);
  }, [section, Page]);
  if (error) return <ErrorAlert error={error} title="The console cannot load your session" />;
  if (!session) return <Loading what="your session" />;
  if (!section) {
    // Unknown paths, and pages this caller may not use: the overview.
    if (path !== "/") queueMicrotask(() => navigate("/"));
    return <Loading what="the console" />;
  }
  const rest = path.slice(section.path.length).split("/").filter(Boolean).map(decodeURIComponent);
  document.title = `${section.title} · Virtual Cluster Platform`;
  return (
    <SessionContext.Provider value={session}>
      <Layout session={session} settings={settings}>
        {Page ? <Page rest={rest} /> : <Loading what={section.title} />}
      </Layout>
    </SessionContext.Provider>
  );
}

export function App({ settings }: { settings: ConsoleSettings }) {
  const path = usePath();
  if (path === "/login" || path.startsWith("/login/")) return <LoginPage settings={settings} />;
  return <SignedIn settings={settings} />;
}
