/** The demo workspace's documents: realistic Markdown with headings, lists, tables and code. */

export interface DemoDocument {
  title: string;
  content: string;
  /** Where it lives: the personal workspace, a project, or the team. */
  place: 'personal' | 'launch' | 'journal' | 'team' | 'roadmap';
  /** Created from the launch-planning chat. */
  fromChat?: boolean;
}

export const demoDocuments: DemoDocument[] = [
  {
    title: 'Launch plan: Folio 1.0',
    place: 'launch',
    content: `# Launch plan: Folio 1.0

## Goals
- Ship the public API to every Pro, Team and Enterprise customer
- Publish the reference docs and two client examples
- Keep p99 latency under 50 ms during launch week

## Timeline

| Week | Milestone | Owner |
|---|---|---|
| 1 | Feature freeze | Ada |
| 2 | Beta with ten design partners | Grace |
| 3 | Docs and pricing page | Ada |
| 4 | General availability | Everyone |

## Risks
1. Rate limits too tight for batch importers
2. Search quality on very short queries
`,
  },
  {
    title: 'Launch checklist',
    place: 'launch',
    fromChat: true,
    content: `# Launch checklist

Drafted from the *Planning the launch* chat.

- [x] Freeze the v1 contract
- [x] Load test at 2,000 requests per second
- [ ] Rotate the demo keys
- [ ] Announce in the changelog
- [ ] Send the customer e-mail

> Nothing ships on a Friday.
`,
  },
  {
    title: 'Pricing page copy',
    place: 'launch',
    content: `# Pricing

## Pro — for individuals
API access with personal keys, 120 reads and 30 writes a minute.

## Team — for groups
Everything in Pro, plus shared team workspaces and projects.

## Enterprise
Single sign-on, audit logs and a support contract.
`,
  },
  {
    title: 'Journal — March',
    place: 'journal',
    content: `# March

Spent the week on the search index. Prefix matching works; accents fold
(*café* finds *cafe*). Next: ranking by recency without scanning every match.

Mood: optimistic.
`,
  },
  {
    title: 'Reading list',
    place: 'personal',
    content: `# Reading list

1. *Designing Data-Intensive Applications* — Martin Kleppmann
2. *The Pragmatic Programmer* — Hunt & Thomas
3. *A Philosophy of Software Design* — John Ousterhout

Finished: ~~Refactoring~~ (second edition).
`,
  },
  {
    title: 'Snippets: calling the API',
    place: 'personal',
    content: `# Calling the API

\`\`\`sh
curl -s -H "Authorization: Bearer $FOLIO_KEY" https://folio.example.com/v1/documents?q=roadmap
\`\`\`

\`\`\`ts
const res = await fetch(\`\${base}/documents/\${id}\`, {
  headers: { authorization: \`Bearer \${key}\` },
});
const doc = await res.json();
\`\`\`
`,
  },
  {
    title: 'Weekly review — week 12',
    place: 'personal',
    content: `# Weekly review

## Done
- Shipped optimistic concurrency for document updates
- Wrote the operator command line

## Next
- Benchmarks against the bare-HTTP ceiling
- OpenAPI reference page
`,
  },
  {
    title: 'Team handbook',
    place: 'team',
    content: `# Team handbook

## How we work
- Issues first, then code
- Small commits with honest messages
- Every change comes with a test that would fail without it

## On call
| Day | Person |
|---|---|
| Mon–Wed | Ada |
| Thu–Sun | Grace |
`,
  },
  {
    title: 'Incident 2026-02-14: slow search',
    place: 'team',
    content: `# Incident: slow search

**Impact:** search p99 rose to 900 ms for 40 minutes.

## Timeline
- 10:02 alert fired
- 10:15 cause found: a query sorted every match before taking 20
- 10:42 fix deployed

## Follow-ups
- [ ] Benchmark search at 100k documents
- [x] Add an index on the sort key
`,
  },
  {
    title: 'Onboarding: first week',
    place: 'team',
    content: `# Your first week

1. Get a Folio key: \`folio key create --user <you> --name laptop\`
2. Read the API spec and DESIGN notes
3. Pair on one issue end to end

Welcome aboard!
`,
  },
  {
    title: 'Q3 roadmap',
    place: 'roadmap',
    content: `# Q3 roadmap

| Theme | Bet | Confidence |
|---|---|---|
| Scale | PostgreSQL and Redis for several instances | High |
| Agents | MCP server over the same API | Medium |
| Search | Ranking by relevance and recency | Medium |

Private to the roadmap project until we announce it.
`,
  },
  {
    title: 'Architecture overview',
    place: 'roadmap',
    content: `# Architecture

\`\`\`
client → Fastify routes → services → store (SQLite | PostgreSQL)
\`\`\`

- Schemas are the single source of validation and serialization.
- Visibility is enforced in SQL, never after loading a row.
`,
  },
];
