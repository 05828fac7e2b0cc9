// Lint rules, including the dependency direction of docs/architecture.md: the engine (`src/jms`)
// imports nothing of the rest, the store imports only the engine, connectors see only `src/spi`,
// and only the CLI imports the composition layer (`src/gateway`).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const restrict = (patterns) => ({
  'no-restricted-imports': [
    'error',
    {
      patterns: patterns.map((group) => ({
        group: [group],
        message: 'breaks the layering of docs/architecture.md',
      })),
    },
  ],
});

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'data/**', '.tmp/**', '.kafka/**', 'eslint.config.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      // A caught error is passed on as it is, whatever its type.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-syntax': [
        'error',
        { selector: 'ExportAllDeclaration', message: 'export every name explicitly' },
      ],
    },
  },
  {
    files: ['src/jms/**/*.ts'],
    rules: restrict([
      '**/store/**',
      '**/spi/**',
      '**/bridge/**',
      '**/config/**',
      '**/admin/**',
      '**/cli/**',
      '**/gateway/**',
      '**/connectors/**',
      'node:fs',
      'node:fs/*',
      'node:net',
      'node:http',
    ]),
  },
  {
    files: ['src/store/**/*.ts'],
    rules: restrict([
      '**/spi/**',
      '**/bridge/**',
      '**/config/**',
      '**/admin/**',
      '**/cli/**',
      '**/gateway/**',
      '**/connectors/**',
    ]),
  },
  {
    files: ['src/spi/**/*.ts'],
    rules: restrict([
      '**/store/**',
      '**/bridge/**',
      '**/config/**',
      '**/admin/**',
      '**/cli/**',
      '**/gateway/**',
      '**/connectors/**',
    ]),
  },
  {
    files: ['src/bridge/**/*.ts'],
    rules: restrict([
      '**/store/**',
      '**/config/**',
      '**/admin/**',
      '**/cli/**',
      '**/gateway/**',
      '**/connectors/**',
    ]),
  },
  {
    // The composition layer is the CLI's alone: config, admin and the library entry point
    // (`src/index.ts`) are composed by it, never the other way round.
    files: ['src/config/**/*.ts', 'src/admin/**/*.ts', 'src/index.ts'],
    rules: restrict(['**/gateway/**', '**/cli/**']),
  },
  {
    files: ['connectors/**/*.ts'],
    rules: restrict([
      '**/src/jms/**',
      '**/src/store/**',
      '**/src/bridge/**',
      '**/src/config/**',
      '**/src/admin/**',
      '**/src/cli/**',
      '**/src/gateway/**',
    ]),
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-floating-promises': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
);
