// The Chat area lives in pages/chat/ (App.tsx imports it from here).
export { ChatPage } from './chat/chat-page';
