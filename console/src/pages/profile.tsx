// Profile: who you are, your teams, and the way to your Access Keys.

import {
  Button,
  DescriptionList,
  DescriptionListDescription,
  DescriptionListGroup,
  DescriptionListTerm,
  PageSection,
  Title,
} from "@patternfly/react-core";
import { navigate } from "../lib/router.tsx";
import { useSession } from "../lib/session.ts";

export default function ProfilePage() {
  const session = useSession();
  return (
    <PageSection>
      <Title headingLevel="h1">Profile</Title>
      <DescriptionList>
        <DescriptionListGroup>
          <DescriptionListTerm>Username</DescriptionListTerm>
          <DescriptionListDescription>{session.username || session.user}</DescriptionListDescription>
        </DescriptionListGroup>
        <DescriptionListGroup>
          <DescriptionListTerm>Display Name</DescriptionListTerm>
          <DescriptionListDescription>{session.displayName || "Not set"}</DescriptionListDescription>
        </DescriptionListGroup>
      </DescriptionList>
      <Button variant="secondary" onClick={() => navigate("/access-keys")} style={{ marginTop: "1rem" }}>
        Access Keys
      </Button>
    </PageSection>
  );
}
