export { AdminPage } from './admin/users';
