-- Words inside angle brackets are searchable, as in SQLite's FTS5.
-- PostgreSQL's default text-search parser reads `<memory-context>`, `<div>`
-- and the like as markup tags, which the 'simple' configuration does not
-- index: a message "<memory-context>secret</memory-context>" was not found
-- by `memory` or `secret` here, while unicode61 finds both. The vector now
-- reads `<` and `>` as spaces (found by the replay of generated scripts on
-- both backends). Dropping the column drops its index; both come back.
ALTER TABLE messages DROP COLUMN search_vector;
ALTER TABLE messages ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (
    to_tsvector('simple', translate(
        left(coalesce(content, ''), 8192) || ' ' ||
        left(coalesce(tool_name, ''), 256) || ' ' ||
        left(coalesce(tool_calls, ''), 4096),
        '<>', '  '))
) STORED;
CREATE INDEX idx_messages_search_vector ON messages USING GIN (search_vector);
