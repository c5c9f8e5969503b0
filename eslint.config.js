import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import reactHooks from 'eslint-plugin-react-hooks';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      '.data/**',
      'coverage/**',
      'eslint.config.js',
      'jest.config.js',
      'jest.unit.config.js',
      'jest.workflows.config.js',
      '.dependency-cruiser*.cjs',
      'console/vite.config.ts',
      'console/src/api/schema.gen.ts',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      parserOptions: { project: './tsconfig.json', tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      eqeqeq: ['error', 'always'],
      curly: ['error', 'all'],
    },
  },
  {
    // The console: browser code with its own tsconfig (DOM, JSX), React's hook rules.
    files: ['console/**/*.{ts,tsx}'],
    plugins: { 'react-hooks': reactHooks },
    languageOptions: {
      parserOptions: { project: './console/tsconfig.json', tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      'react-hooks/rules-of-hooks': 'error',
      'react-hooks/exhaustive-deps': 'error',
    },
  },
  {
    files: ['src/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: 'class-validator',
              importNames: ['IsOptional'],
              message:
                'IsOptional lets null through to NOT NULL columns: use Optional() (or Nullable()) from src/common/optional.ts.',
            },
          ],
        },
      ],
    },
  },
  {
    // Plain JavaScript that runs before any build (scripts/pinned-node.mjs): not in a tsconfig, so no
    // type-aware rules; Node's globals.
    files: ['**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      parserOptions: { project: false, program: null },
      globals: { console: 'readonly', process: 'readonly', SharedArrayBuffer: 'readonly', Atomics: 'readonly' },
    },
  },
  {
    // The house rules (issue 35): no server file longer than 350 lines, every line counted
    // (migrations are generated and excepted; spec files count too).
    files: ['src/**/*.ts', 'workflows/**/*.ts', 'activities/**/*.ts'],
    ignores: ['src/database/migrations/**'],
    rules: {
      'max-lines': ['error', { max: 350, skipBlankLines: false, skipComments: false }],
    },
  },
  {
    // SQL lives in repositories: `.query(` and TypeORM query builders only in *.repository.ts
    // files and under src/database/.
    files: ['src/**/*.ts', 'workflows/**/*.ts', 'activities/**/*.ts'],
    ignores: ['**/*.repository.ts', 'src/database/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          // A Temporal Query of a workflow handle (`client.workflow.getHandle(id).query(...)`, or a
          // variable named `handle`) is not SQL.
          selector:
            "CallExpression[callee.property.name='query']:not([callee.object.callee.property.name='getHandle']):not([callee.object.name=/[hH]andle$/])",
          message: 'SQL belongs in a *.repository.ts file (or under src/database/): move this .query( there.',
        },
        {
          selector: "CallExpression[callee.property.name='createQueryBuilder']",
          message:
            'Query builders belong in a *.repository.ts file (or under src/database/): move this createQueryBuilder there.',
        },
      ],
    },
  },
  {
    // Tests read loosely typed JSON answers.
    files: ['test/**/*.ts', '**/*.spec.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['node:*', 'fs', 'path', 'crypto', 'http', 'https', 'net', 'os', 'child_process'],
              message: 'Workflow code must be deterministic: no Node builtins.',
            },
            {
              group: ['@nestjs/*', 'typeorm', 'axios', '@anthropic-ai/*', 'pg'],
              message: 'Workflow code may not import I/O libraries.',
            },
            {
              group: ['../src/*', '../activities/*'],
              allowTypeImports: true,
              message: 'Workflows import only workflows/* and types from activities.',
            },
          ],
        },
      ],
    },
  },
);
