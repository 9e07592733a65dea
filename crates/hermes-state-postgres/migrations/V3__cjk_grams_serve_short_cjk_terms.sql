-- Short CJK terms through an index (docs/POSTGRES.md, "Short CJK terms
-- through an index"). pg_trgm cannot index a pattern of fewer than three
-- characters, so a search for a one- or two-character CJK term read every
-- message (ILIKE over content, tool_name and tool_calls). This step indexes
-- the distinct CJK characters and pairs of adjacent CJK characters of the
-- three columns, whole (ILIKE reads them whole), with GIN: a message
-- containing a term holds every gram of the term, so
-- `cjk_grams_of(content, tool_name, tool_calls) @> cjk_grams_of(term)` finds
-- the candidates and the search keeps its ILIKE as the exact check.
--
-- An index on the expression, not a stored column: nothing is added to the
-- rows of `messages` (a generated column made its heap 9 % larger on the
-- bench's 100k store, 82 MB against 75) and nothing but this index reads
-- the grams.
--
-- CJK characters are the router's (hermes_state_core::search::is_router_cjk).
-- The text is lowered first, as ILIKE lowers both sides, and the term goes
-- through this same function: a text whose lowered form contains the term's
-- lowered form holds every gram of the term. The parts are joined by a
-- space, so no pair spans two columns; NULL parts are left out. Pairs come
-- from two scans of each run of CJK characters (from its first and from its
-- second character): linear in the text, where indexing an array by
-- position is not. PL/pgSQL, not SQL: a SQL function's body is planned again
-- for every statement that calls it, and a move or an append inserts one row
-- per statement (measured: 125 µs a row against 7); PL/pgSQL keeps its plan
-- per connection. Text without a CJK character returns after the first
-- test. Every name is pg_catalog's, whatever the caller's search_path.
CREATE FUNCTION cjk_grams_of(VARIADIC parts TEXT[]) RETURNS TEXT[]
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $body$
DECLARE
    lowered TEXT := pg_catalog.lower(pg_catalog.array_to_string(parts, ' '));
BEGIN
    IF lowered IS NULL OR lowered OPERATOR(pg_catalog.!~)
        '[\u3000-\u303f\u3040-\u309f\u30a0-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\U00020000-\U0002a6df]'
    THEN
        RETURN '{}';
    END IF;
    RETURN (
        WITH runs AS (
            SELECT r.m[1] AS run
            FROM pg_catalog.regexp_matches(lowered,
                '[\u3000-\u303f\u3040-\u309f\u30a0-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\U00020000-\U0002a6df]+',
                'g') AS r(m)
        )
        SELECT coalesce(pg_catalog.array_agg(DISTINCT g.gram), '{}')
        FROM (
            SELECT u.m[1] FROM runs, pg_catalog.regexp_matches(runs.run, '.', 'g') AS u(m)
            UNION ALL
            SELECT p.m[1] FROM runs, pg_catalog.regexp_matches(runs.run, '..', 'g') AS p(m)
            UNION ALL
            SELECT q.m[1]
            FROM runs, pg_catalog.regexp_matches(pg_catalog.substr(runs.run, 2), '..', 'g') AS q(m)
        ) AS g(gram)
    );
END
$body$;

-- Never NULL (a message without CJK gives '{}'), so a term whose grams are
-- empty still matches every row and the ILIKE decides.
CREATE INDEX idx_messages_cjk_grams ON messages
    USING GIN (cjk_grams_of(content, tool_name, tool_calls));
