//! The search queries of the benches: what the facade is asked, and the one
//! SQL query the baseline runs for the same answer.

use hermes_state::SearchOptions;

use crate::baseline::RawFilters;
use crate::corpus::markers;

/// One search query.
#[derive(Debug, Clone)]
pub struct SearchCase {
    /// Bench name.
    pub name: &'static str,
    /// What the facade is asked.
    pub query: String,
    /// Source filter (facade and baseline).
    pub sources: Vec<String>,
    /// Role filter (facade and baseline).
    pub roles: Vec<String>,
    /// The FTS table the facade ends up answering from.
    pub table: &'static str,
    /// The MATCH text of that final query.
    pub match_text: String,
    /// Whether the case counts as a "word query" for the 10 ms goal.
    pub word_query: bool,
    /// Which markers' messages the query matches.
    pub hits: Hits,
}

/// How many messages a case matches in an `n`-message corpus.
#[derive(Debug, Clone, Copy)]
pub enum Hits {
    /// The messages of these markers.
    Markers(&'static [&'static str]),
    /// Some subset of a marker's messages (filters).
    Filtered(&'static str),
    /// The marker's messages except tool results (which the trigram and
    /// CJK indexes leave out).
    NonTool(&'static str),
}

impl SearchCase {
    fn new(
        name: &'static str,
        query: &str,
        table: &'static str,
        match_text: &str,
        hits: Hits,
    ) -> Self {
        SearchCase {
            name,
            query: query.to_owned(),
            sources: Vec::new(),
            roles: Vec::new(),
            table,
            match_text: match_text.to_owned(),
            word_query: false,
            hits,
        }
    }

    /// The facade's options (limit 20, relevance order).
    pub fn options(&self) -> SearchOptions {
        SearchOptions {
            source_filter: (!self.sources.is_empty()).then(|| self.sources.clone()),
            role_filter: (!self.roles.is_empty()).then(|| self.roles.clone()),
            ..SearchOptions::default()
        }
    }

    /// The baseline's filters.
    pub fn filters(&self) -> RawFilters {
        RawFilters {
            sources: self.sources.clone(),
            roles: self.roles.clone(),
        }
    }
}

/// Every search case, in bench order.
pub fn search_cases() -> Vec<SearchCase> {
    let word = |name, hits: &'static [&'static str]| {
        let mut case = SearchCase::new(name, hits[0], "messages_fts", hits[0], Hits::Markers(hits));
        case.word_query = true;
        case
    };
    let mut filtered = word("word_filtered", &[markers::COMMON.text]);
    filtered.name = "word_filtered";
    filtered.sources = vec!["telegram".to_owned(), "discord".to_owned()];
    filtered.roles = vec!["assistant".to_owned()];
    filtered.hits = Hits::Filtered(markers::COMMON.text);
    let phrase = format!("\"{}\"", markers::PHRASE.text);
    let fragment = format!("\"{}\"", markers::FRAGMENT_QUERY);
    let cjk2 = format!("\"{}\"", markers::CJK_TWO.text);
    let cjk3 = format!("\"{}\"", markers::CJK_THREE.text);
    let or_not = format!(
        "{} OR {} NOT {}",
        markers::RARE.text,
        markers::UNCOMMON.text,
        markers::FREQUENT.text
    );
    vec![
        word("word_rare", &[markers::RARE.text]),
        word("word_uncommon", &[markers::UNCOMMON.text]),
        word("word_common", &[markers::COMMON.text]),
        word("word_frequent", &[markers::FREQUENT.text]),
        filtered,
        SearchCase::new(
            "phrase",
            &phrase,
            "messages_fts",
            &phrase,
            Hits::Markers(&["blue lantern"]),
        ),
        SearchCase::new(
            "prefix",
            "deploy*",
            "messages_fts",
            "deploy*",
            Hits::Markers(&["deploy"]),
        ),
        SearchCase::new(
            "or_not",
            &or_not,
            "messages_fts",
            &or_not,
            Hits::Markers(&["kestrel", "falcon"]),
        ),
        SearchCase::new(
            "trigram_substring",
            markers::FRAGMENT_QUERY,
            "messages_fts_trigram",
            &fragment,
            Hits::NonTool("zephyrquartz"),
        ),
        SearchCase::new(
            "cjk_2char",
            markers::CJK_TWO.text,
            "messages_fts_cjk",
            &cjk2,
            Hits::Markers(&["搜索"]),
        ),
        SearchCase::new(
            "cjk_3char",
            markers::CJK_THREE.text,
            "messages_fts_cjk",
            &cjk3,
            Hits::Markers(&["数据库"]),
        ),
    ]
}
