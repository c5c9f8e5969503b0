/** What a signed-out visitor reads beside the sign-in and sign-up forms: what agentsite is and what to do first. */
import { useDemoSite } from '../components/demo-site';

export function Welcome() {
  const demo = useDemoSite();
  return (
    <section className="welcome" aria-labelledby="welcome-heading">
      <h2 id="welcome-heading">What agentsite does</h2>
      <p>
        agentsite connects an AI chat and your own agents to the tools of the sites you use. A site describes its tools
        in a small manifest; you connect your account on it once, and agentsite keeps that access encrypted and calls
        the tools for you: when you chat, on a schedule, or when another service calls your agent.
      </p>
      <h2>Get started in three steps</h2>
      <ol className="steps">
        <li>
          <strong>Add a site</strong> to your vault by its address.
        </li>
        <li>
          <strong>Connect it</strong>: sign in on the site and approve, or paste a token it gave you.
        </li>
        <li>
          <strong>Chat with it, or build an agent</strong> that runs on its own.
        </li>
      </ol>
      {demo ? (
        <p className="demo-hint">
          Nothing to connect yet? This service runs a demo site at <code>{demo}</code> (<code>npm start</code> starts
          it): add that address as your first site.
        </p>
      ) : (
        <p className="demo-hint">
          Trying agentsite on your computer? <code>npm start</code> also runs a demo site to add as your first site.
        </p>
      )}
    </section>
  );
}
