/** The Chat area: earlier conversations beside either a new conversation's form or the open one. */
import { useState } from 'react';
import { useParams } from 'react-router';
import { PageTitle } from '../../components/ui';
import { Conversation } from './conversation';
import { NewSession } from './new-session';
import { SessionList } from './session-list';

export function ChatPage() {
  const { token } = useParams();
  const [version, setVersion] = useState(0);
  const changed = () => setVersion((v) => v + 1);
  return (
    <section className="chat">
      <PageTitle>Chat</PageTitle>
      <div className="chat-layout">
        <SessionList version={version} />
        <div className="chat-main">
          {token === undefined ? (
            <NewSession onCreated={changed} />
          ) : (
            <Conversation key={token} token={token} onChanged={changed} />
          )}
        </div>
      </div>
    </section>
  );
}
