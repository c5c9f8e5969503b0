/**
 * The console's header: the brand, the main navigation and the account bar (the workspace the user
 * acts in, their account, Sign out). Below the `menu` breakpoint of styles.css the navigation and the
 * account bar fold into a menu behind one button; it closes on navigation, on Escape and on a click
 * outside it.
 */
import { useEffect, useId, useRef, useState } from 'react';
import { NavLink, useLocation, useNavigate } from 'react-router';
import { countWords, useWaitingCount, type WaitingCount } from '../pages/approvals/count';
import { useSession } from '../session/session';

const LINKS: Array<{ to: string; label: string }> = [
  { to: '/vault', label: 'Vault' },
  { to: '/chat', label: 'Chat' },
  { to: '/agents', label: 'Agents' },
  { to: '/approvals', label: 'Approvals' },
  { to: '/billing', label: 'Plan & credits' },
  { to: '/workspaces', label: 'Workspaces' },
  { to: '/check', label: 'Check a site' },
];

/** Beside "Approvals": how many wait for a decision (nothing when none do). */
function WaitingBadge({ waiting }: { waiting: WaitingCount | undefined }) {
  if (waiting === undefined || waiting.count === 0) {
    return null;
  }
  const { text, name } = countWords(waiting);
  return (
    <>
      {' '}
      <span className="badge warn count" aria-hidden="true">
        {text}
      </span>
      <span className="visually-hidden">({name})</span>
    </>
  );
}

export function Header() {
  const { me, workspaces, workspaceId, switchWorkspace, signOut } = useSession();
  const navigate = useNavigate();
  const location = useLocation();
  const [open, setOpen] = useState(false);
  const [signingOut, setSigningOut] = useState(false);
  const menuId = useId();
  const toggle = useRef<HTMLButtonElement>(null);
  const menu = useRef<HTMLDivElement>(null);
  const waiting = useWaitingCount();

  // A link followed (or any other change of page) closes the menu.
  useEffect(() => {
    setOpen(false);
  }, [location.pathname, location.search]);

  // While open: Escape closes it and gives the focus back to its button; so does a click outside it.
  useEffect(() => {
    if (!open) {
      return undefined;
    }
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') {
        setOpen(false);
        toggle.current?.focus();
      }
    };
    const onPointer = (e: PointerEvent) => {
      const target = e.target as Node;
      if (!menu.current?.contains(target) && !toggle.current?.contains(target)) {
        setOpen(false);
      }
    };
    document.addEventListener('keydown', onKey);
    document.addEventListener('pointerdown', onPointer);
    return () => {
      document.removeEventListener('keydown', onKey);
      document.removeEventListener('pointerdown', onPointer);
    };
  }, [open]);

  // Signing in or up on the way to a page (?next=, an app's consent page) keeps going there.
  const onTheWay = new URLSearchParams(location.search).has('next') ? location.search : '';

  // A link followed closes the menu, even one to the page already shown.
  const close = () => setOpen(false);

  const leave = async () => {
    setSigningOut(true);
    try {
      await signOut();
    } finally {
      setSigningOut(false);
      setOpen(false);
      await navigate('/signin', { replace: true });
    }
  };

  return (
    <header className="top">
      <a className="skip" href="#main">
        Skip to content
      </a>
      <NavLink to="/" className="brand">
        agentsite
      </NavLink>
      {me ? (
        <>
          <button
            ref={toggle}
            type="button"
            className="menu-toggle secondary"
            aria-expanded={open}
            aria-controls={menuId}
            onClick={() => setOpen(!open)}
          >
            <span className="menu-icon" aria-hidden="true" />
            Menu
          </button>
          <div id={menuId} ref={menu} className={open ? 'menu open' : 'menu'}>
            <nav aria-label="Main">
              <ul>
                {LINKS.map((link) => (
                  <li key={link.to}>
                    <NavLink to={link.to} onClick={close}>
                      {link.label}
                      {link.to === '/approvals' ? <WaitingBadge waiting={waiting} /> : null}
                    </NavLink>
                  </li>
                ))}
                {me.role === 'admin' ? (
                  <li>
                    <NavLink to="/admin" onClick={close}>
                      Admin
                    </NavLink>
                  </li>
                ) : null}
              </ul>
            </nav>
            <div className="account-bar">
              <label className="workspace-switch">
                <span>Acting in</span>
                <select value={workspaceId ?? ''} onChange={(e) => switchWorkspace(e.target.value || null)}>
                  <option value="">My account</option>
                  {workspaces.map((w) => (
                    <option key={w.id} value={w.id}>
                      {w.name} ({w.role})
                    </option>
                  ))}
                </select>
              </label>
              <NavLink to="/account" className="account-link" onClick={close}>
                {me.email}
              </NavLink>
              <button type="button" className="secondary" onClick={() => void leave()} disabled={signingOut}>
                {signingOut ? 'Signing out…' : 'Sign out'}
              </button>
            </div>
          </div>
        </>
      ) : (
        <nav aria-label="Account" className="signed-out-links">
          <ul>
            <li>
              <NavLink to={`/signin${onTheWay}`}>Sign in</NavLink>
            </li>
            <li>
              <NavLink to={`/signup${onTheWay}`}>Create an account</NavLink>
            </li>
          </ul>
        </nav>
      )}
    </header>
  );
}
