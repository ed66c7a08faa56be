"""Middle-end passes: Program -> Program rewrites between the frontend and polyhedral extraction
(docs/design.md §3). Each pass is a pure function in its own module; they import the IR only."""
