// The run page lives in pages/runs/ (App.tsx imports it from here).
export { RunPage } from './runs/run-page';
