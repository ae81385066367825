// Profile: who you are (your user as the platform stores it), your teams, this session, and what you may change
// yourself: your display name and e-mail, your password (with the current one; every password login of yours ends,
// this one too), your access keys.

import {
  Alert,
  Button,
  DescriptionList,
  DescriptionListDescription,
  DescriptionListGroup,
  DescriptionListTerm,
  PageSection,
  TextInput,
  Title,
} from "@patternfly/react-core";
import { type ReactNode, useState } from "react";
import { ErrorAlert, TimeAgo } from "../components/common.tsx";
import { Field, type FieldErrors, missing } from "../components/form.tsx";
import { FormModal, ResultModal } from "../components/resource-list.tsx";
import { api, endingSession, mgmt } from "../lib/api.ts";
import type { User } from "../lib/kube.ts";
import { Link } from "../lib/router.tsx";
import { useSession } from "../lib/session.ts";
import { useWatchList } from "../lib/use-watch-list.ts";
import { checkProfile, MIN_PASSWORD } from "../lib/user-checks.ts";

function ProfileForm({ user, onClose }: { user: User; onClose: () => void }) {
  const [displayName, setDisplayName] = useState(user.spec?.displayName ?? "");
  const [email, setEmail] = useState(user.spec?.email ?? "");
  return (
    <FormModal
      title="Edit your profile"
      id="profile-form"
      submitLabel="Save"
      failure="Your profile was not saved"
      validate={() => checkProfile({ email })}
      fieldOf={(field) => ({ "spec.displayName": "user-display-name", "spec.email": "user-email" })[field]}
      onSubmit={async () => {
        await api.patch(mgmt("users", user.metadata.name), { spec: { displayName, email } });
        return undefined;
      }}
      onClose={onClose}
    >
      <Field id="user-display-name" label="Display Name">
        <TextInput id="user-display-name" value={displayName} onChange={(_e, v) => setDisplayName(v)} />
      </Field>
      <Field id="user-email" label="Email">
        <TextInput id="user-email" type="email" value={email} onChange={(_e, v) => setEmail(v)} />
      </Field>
    </FormModal>
  );
}

function ChangePassword({ user, onClose }: { user: string; onClose: () => void }) {
  const [current, setCurrent] = useState("");
  const [password, setPassword] = useState("");
  const [again, setAgain] = useState("");
  const [changed, setChanged] = useState(false);
  const validate = (): FieldErrors => {
    const errors = missing([
      ["password-new", password, "New password"],
      ["password-again", again, "The new password again"],
    ]);
    if (!errors["password-new"] && password.length < MIN_PASSWORD) {
      errors["password-new"] = `At least ${MIN_PASSWORD} characters.`;
    }
    if (!errors["password-again"] && again !== password) errors["password-again"] = "Not the same as the new password.";
    return errors;
  };
  if (changed) {
    return (
      <ResultModal title="Password changed" onClose={() => window.location.assign("/login")}>
        <Alert variant="success" isInline title="Your password was changed.">
          Every password login of yours has ended, this one too: log in again with the new password. Your access keys
          keep working.
        </Alert>
      </ResultModal>
    );
  }
  return (
    <FormModal
      title="Change your password"
      id="password-form"
      submitLabel="Change password"
      failure="Your password was not changed"
      variant="small"
      validate={validate}
      fieldOf={(field) => ({ "spec.password": "password-new", "spec.currentPassword": "password-current" })[field]}
      explain={(failure) =>
        failure.code === 403 && /currentPassword/.test(failure.message)
          ? { "password-current": "This is not your current password." }
          : undefined
      }
      onSubmit={async () => {
        // Every password login ends, this session too: the result below says so and leads to the login page.
        await endingSession(() =>
          api.create(mgmt("users", user, "password"), {
            apiVersion: "management.platform.sh/v1",
            kind: "UserPassword",
            spec: { password, currentPassword: current },
          }),
        );
        setChanged(true);
        return false;
      }}
      onClose={onClose}
    >
      <Field id="password-current" label="Current password" helper="Leave it empty if you never had one.">
        <TextInput
          id="password-current"
          type="password"
          autoComplete="current-password"
          value={current}
          onChange={(_e, v) => setCurrent(v)}
        />
      </Field>
      <Field id="password-new" label="New password" isRequired helper={`At least ${MIN_PASSWORD} characters.`}>
        <TextInput
          id="password-new"
          type="password"
          autoComplete="new-password"
          isRequired
          value={password}
          onChange={(_e, v) => setPassword(v)}
        />
      </Field>
      <Field id="password-again" label="New password again" isRequired>
        <TextInput
          id="password-again"
          type="password"
          autoComplete="new-password"
          isRequired
          value={again}
          onChange={(_e, v) => setAgain(v)}
        />
      </Field>
    </FormModal>
  );
}

function Item({ term, children }: { term: string; children: ReactNode }) {
  return (
    <DescriptionListGroup>
      <DescriptionListTerm>{term}</DescriptionListTerm>
      <DescriptionListDescription>{children || "Not set"}</DescriptionListDescription>
    </DescriptionListGroup>
  );
}

export default function ProfilePage() {
  const session = useSession();
  const me = session.user;
  const readable = session.can("get", "users", me);
  const watched = useWatchList<User>(
    readable ? mgmt("users") : undefined,
    `fieldSelector=${encodeURIComponent(`metadata.name=${me}`)}`,
  );
  const user = watched.items[0];
  const [dialog, setDialog] = useState<"profile" | "password">();
  return (
    <PageSection>
      <Title headingLevel="h1">Profile</Title>
      <ErrorAlert error={watched.error} title="Your profile cannot be read" />
      <div className="vcp-actions">
        {user && session.can("patch", "users", me) && (
          <Button variant="secondary" onClick={() => setDialog("profile")}>
            Edit profile
          </Button>
        )}
        {session.can("create", "users/password", me) && (
          <Button variant="secondary" onClick={() => setDialog("password")}>
            Change password
          </Button>
        )}
      </div>
      <DescriptionList isHorizontal className="vcp-detail-section">
        <Item term="Username">{session.username || me}</Item>
        <Item term="Display Name">{user?.spec?.displayName ?? session.displayName}</Item>
        <Item term="Email">{user?.spec?.email ?? session.email}</Item>
        <Item term="Cluster roles">{(user?.spec?.clusterRoles ?? []).map((r) => r.name).join(", ") || "None"}</Item>
        <Item term="Teams">{session.teams.join(", ") || "None"}</Item>
        <Item term="This session">
          {session.accessKeyType === "Login"
            ? "Password or single sign-on login"
            : `Access key (${session.accessKeyType})`}
          , ends <TimeAgo value={session.expiresAt} empty="only when you log out" />
        </Item>
      </DescriptionList>
      <Link to="/access-keys">Your access keys</Link>
      {dialog === "profile" && user && <ProfileForm user={user} onClose={() => setDialog(undefined)} />}
      {dialog === "password" && <ChangePassword user={me} onClose={() => setDialog(undefined)} />}
    </PageSection>
  );
}
