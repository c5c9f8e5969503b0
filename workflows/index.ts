export { echoWorkflow } from './echo.workflow.js';
