// A small history router: the console has a handful of pages, so a path match is all it needs.

import { createContext, type MouseEvent, type ReactNode, useContext, useEffect, useState } from "react";

const LocationContext = createContext<string>("/");

export function navigate(to: string): void {
  if (to === `${window.location.pathname}${window.location.search}`) return;
  window.history.pushState(null, "", to);
  window.dispatchEvent(new PopStateEvent("popstate"));
}

export function RouterProvider({ children }: { children: ReactNode }) {
  const [path, setPath] = useState(window.location.pathname);
  useEffect(() => {
    const update = () => setPath(window.location.pathname);
    window.addEventListener("popstate", update);
    return () => window.removeEventListener("popstate", update);
  }, []);
  return <LocationContext.Provider value={path}>{children}</LocationContext.Provider>;
}

export function usePath(): string {
  return useContext(LocationContext);
}

export function useQuery(name: string): string | null {
  usePath();
  return new URLSearchParams(window.location.search).get(name);
}

/** An in-app link: a real <a href> (keyboard, new tab) that navigates without a reload on a plain click. */
export function Link({ to, children, ...rest }: { to: string; children: ReactNode; "aria-label"?: string }) {
  const onClick = (event: MouseEvent<HTMLAnchorElement>) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(to);
  };
  return (
    <a href={to} onClick={onClick} {...rest}>
      {children}
    </a>
  );
}
