import { type ReactNode } from 'react';
import { Navigate, Route, Routes, useLocation } from 'react-router';
import { Header } from './components/header';
import { TableCellLabels } from './components/table-labels';
import { Busy } from './components/ui';
import { SignInPage, SignUpPage, TermsPage } from './pages/auth';
import { AccountPage } from './pages/account';
import { VaultPage, SitePage } from './pages/vault';
import { OAuthCompletePage } from './pages/oauth-complete';
import { ConsentPage } from './pages/connect';
import { ChatPage } from './pages/chat';
import { AgentsPage, AgentPage, AgentFormPage } from './pages/agents';
import { RunPage } from './pages/runs';
import { ApprovalsPage } from './pages/approvals';
import { BillingPage } from './pages/billing';
import { WorkspacesPage, WorkspacePage } from './pages/workspaces';
import { AdminPage } from './pages/admin';
import { CheckPage } from './pages/check';
import { NotFoundPage } from './pages/not-found';
import { useSession } from './session/session';

/** Signed in and terms accepted, else to sign-in (coming back here afterwards) or to the terms step. */
function Private({ children, admin = false }: { children: ReactNode; admin?: boolean }) {
  const { me } = useSession();
  const location = useLocation();
  const back = encodeURIComponent(location.pathname + location.search);
  if (me === undefined) {
    return <Busy label="Loading your account…" />;
  }
  if (me === null) {
    return <Navigate to={`/signin?next=${back}`} replace />;
  }
  if (me.acceptedTermsAt === null) {
    return <Navigate to={`/terms?next=${back}`} replace />;
  }
  if (admin && me.role !== 'admin') {
    return <NotFoundPage />;
  }
  return <>{children}</>;
}

export function App() {
  const { workspaceId } = useSession();
  return (
    <>
      <Header />
      <TableCellLabels />
      {/* Pages remount when the workspace changes, so every list reloads in the new scope. */}
      <main id="main" key={workspaceId ?? 'own'}>
        <Routes>
          <Route path="/" element={<Navigate to="/vault" replace />} />
          <Route path="/signin" element={<SignInPage />} />
          <Route path="/signup" element={<SignUpPage />} />
          <Route path="/terms" element={<TermsPage />} />
          <Route
            path="/oauth/complete"
            element={
              <Private>
                <OAuthCompletePage />
              </Private>
            }
          />
          {/* An MCP client's authorization request, sent here by the service's authorization server. */}
          <Route
            path="/connect/:uid"
            element={
              <Private>
                <ConsentPage />
              </Private>
            }
          />
          <Route
            path="/account"
            element={
              <Private>
                <AccountPage />
              </Private>
            }
          />
          <Route
            path="/vault"
            element={
              <Private>
                <VaultPage />
              </Private>
            }
          />
          <Route
            path="/vault/:siteId"
            element={
              <Private>
                <SitePage />
              </Private>
            }
          />
          <Route
            path="/check"
            element={
              <Private>
                <CheckPage />
              </Private>
            }
          />
          <Route
            path="/chat"
            element={
              <Private>
                <ChatPage />
              </Private>
            }
          />
          <Route
            path="/chat/:token"
            element={
              <Private>
                <ChatPage />
              </Private>
            }
          />
          <Route
            path="/agents"
            element={
              <Private>
                <AgentsPage />
              </Private>
            }
          />
          <Route
            path="/agents/new"
            element={
              <Private>
                <AgentFormPage />
              </Private>
            }
          />
          <Route
            path="/agents/:agentId"
            element={
              <Private>
                <AgentPage />
              </Private>
            }
          />
          <Route
            path="/agents/:agentId/edit"
            element={
              <Private>
                <AgentFormPage />
              </Private>
            }
          />
          <Route
            path="/approvals"
            element={
              <Private>
                <ApprovalsPage />
              </Private>
            }
          />
          <Route
            path="/runs/:runId"
            element={
              <Private>
                <RunPage />
              </Private>
            }
          />
          <Route
            path="/billing"
            element={
              <Private>
                <BillingPage />
              </Private>
            }
          />
          <Route
            path="/workspaces"
            element={
              <Private>
                <WorkspacesPage />
              </Private>
            }
          />
          <Route
            path="/workspaces/:workspaceId"
            element={
              <Private>
                <WorkspacePage />
              </Private>
            }
          />
          <Route
            path="/admin"
            element={
              <Private admin>
                <AdminPage />
              </Private>
            }
          />
          <Route path="*" element={<NotFoundPage />} />
        </Routes>
      </main>
    </>
  );
}
