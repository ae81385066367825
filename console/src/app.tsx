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
import { lazy, type ReactNode, Suspense, useEffect, useState } from "react";
import { ErrorAlert, Loading } from "./components/common.tsx";
import type { ConsoleSettings, NavBarButton } from "./lib/branding.ts";
import { Link, navigate, usePath } from "./lib/router.tsx";
import { loadSession, logout, type Session, SessionContext } from "./lib/session.ts";
import { LoginPage } from "./pages/login.tsx";

const UsersPage = lazy(() => import("./pages/users.tsx"));
const TeamsPage = lazy(() => import("./pages/teams.tsx"));
const AccessKeysPage = lazy(() => import("./pages/access-keys.tsx"));
const ProjectsPage = lazy(() => import("./pages/projects.tsx"));
const ConfigPage = lazy(() => import("./pages/config.tsx"));
const AuditPage = lazy(() => import("./pages/audit.tsx"));
const ProfilePage = lazy(() => import("./pages/profile.tsx"));

interface Section {
  path: string;
  title: string;
  show: (session: Session) => boolean;
  render: (rest: string[]) => ReactNode;
}

const SECTIONS: Section[] = [
  { path: "/users", title: "Users", show: (s) => s.canListUsers, render: (rest) => <UsersPage rest={rest} /> },
  { path: "/teams", title: "Teams", show: (s) => s.canListUsers, render: () => <TeamsPage /> },
  { path: "/projects", title: "Projects", show: () => true, render: (rest) => <ProjectsPage rest={rest} /> },
  { path: "/access-keys", title: "Access Keys", show: () => true, render: () => <AccessKeysPage /> },
  { path: "/config", title: "Config", show: (s) => s.canReadConfig, render: () => <ConfigPage /> },
  { path: "/audit", title: "Audit", show: (s) => s.canListUsers, render: () => <AuditPage /> },
  { path: "/profile", title: "Profile", show: () => false, render: () => <ProfilePage /> },
];

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
                isActive={path === section.path || path.startsWith(`${section.path}/`)}
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
  useEffect(() => {
    loadSession().then(setSession, setError);
  }, []);
  if (error) return <ErrorAlert error={error} title="The console cannot load your session" />;
  if (!session) return <Loading what="your session" />;
  const visible = SECTIONS.filter((section) => section.show(session) || section.path === "/profile");
  const section = visible.find((s) => path === s.path || path.startsWith(`${s.path}/`));
  if (!section) {
    // "/" and unknown paths: the first page this caller may use.
    const first = visible[0]?.path ?? "/profile";
    if (path !== first) queueMicrotask(() => navigate(first));
    return <Loading what="the console" />;
  }
  const rest = path.slice(section.path.length).split("/").filter(Boolean).map(decodeURIComponent);
  document.title = `${section.title} · Virtual Cluster Platform`;
  return (
    <SessionContext.Provider value={session}>
      <Layout session={session} settings={settings}>
        <Suspense fallback={<Loading what={section.title} />}>{section.render(rest)}</Suspense>
      </Layout>
    </SessionContext.Provider>
  );
}

export function App({ settings }: { settings: ConsoleSettings }) {
  const path = usePath();
  if (path === "/login" || path.startsWith("/login/")) return <LoginPage settings={settings} />;
  return <SignedIn settings={settings} />;
}
