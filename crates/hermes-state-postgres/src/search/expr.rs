//! The FTS5 query subset the sanitizer produces, parsed into a tree that
//! compiles to a bound `tsquery` or to substring conditions.
//!
//! Grammar (as FTS5's: adjacency binds tightest, then `NOT`, `AND`, `OR`,
//! all left-associative): `or := and (OR and)*`, `and := not (AND not)*`,
//! `not := seq (NOT seq)*`, `seq := phrase+`, where a phrase is a bareword
//! or a `"…"` string (`""` escapes a quote), either followed by `*` for a
//! prefix. Only queries FTS5 itself accepts reach the parser (the caller
//! checks with [`hermes_state_core::fts5_syntax`]).

/// A parsed query.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// Text to match as a phrase; `prefix` when it ended with `*`.
    Phrase {
        /// The phrase's text.
        text: String,
        /// Whether the last word is a prefix.
        prefix: bool,
    },
    /// Both sides.
    And(Box<Expr>, Box<Expr>),
    /// Either side.
    Or(Box<Expr>, Box<Expr>),
    /// The left side without the right.
    Not(Box<Expr>, Box<Expr>),
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Phrase(String, bool),
    And,
    Or,
    Not,
}

fn is_fts5_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

fn is_bareword_char(c: char) -> bool {
    !c.is_ascii() || c.is_ascii_alphanumeric() || c == '_' || c == '\u{1a}'
}

fn tokens(query: &str) -> Option<Vec<Token>> {
    let chars: Vec<char> = query.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if is_fts5_space(c) {
            i += 1;
            continue;
        }
        let text = if c == '"' {
            let mut text = String::new();
            i += 1;
            loop {
                match chars.get(i) {
                    None => return None,
                    Some('"') if chars.get(i + 1) == Some(&'"') => {
                        text.push('"');
                        i += 2;
                    }
                    Some('"') => {
                        i += 1;
                        break;
                    }
                    Some(&other) => {
                        text.push(other);
                        i += 1;
                    }
                }
            }
            text
        } else if is_bareword_char(c) {
            let start = i;
            while i < chars.len() && is_bareword_char(chars[i]) {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            match word.as_str() {
                "AND" => {
                    out.push(Token::And);
                    continue;
                }
                "OR" => {
                    out.push(Token::Or);
                    continue;
                }
                "NOT" => {
                    out.push(Token::Not);
                    continue;
                }
                _ => word,
            }
        } else {
            return None;
        };
        let prefix = chars.get(i) == Some(&'*');
        if prefix {
            i += 1;
        }
        out.push(Token::Phrase(text, prefix));
    }
    Some(out)
}

/// Parses a query FTS5 accepts; `None` for anything outside the subset.
pub fn parse(query: &str) -> Option<Expr> {
    let tokens = tokens(query)?;
    let mut parser = Parser { tokens, at: 0 };
    let expr = parser.or()?;
    (parser.at == parser.tokens.len()).then_some(expr)
}

struct Parser {
    tokens: Vec<Token>,
    at: usize,
}

impl Parser {
    fn eat(&mut self, token: &Token) -> bool {
        let found = self.tokens.get(self.at) == Some(token);
        if found {
            self.at += 1;
        }
        found
    }

    fn or(&mut self) -> Option<Expr> {
        let mut left = self.and()?;
        while self.eat(&Token::Or) {
            left = Expr::Or(Box::new(left), Box::new(self.and()?));
        }
        Some(left)
    }

    fn and(&mut self) -> Option<Expr> {
        let mut left = self.not()?;
        while self.eat(&Token::And) {
            left = Expr::And(Box::new(left), Box::new(self.not()?));
        }
        Some(left)
    }

    fn not(&mut self) -> Option<Expr> {
        let mut left = self.seq()?;
        while self.eat(&Token::Not) {
            left = Expr::Not(Box::new(left), Box::new(self.seq()?));
        }
        Some(left)
    }

    fn seq(&mut self) -> Option<Expr> {
        let mut left = self.phrase()?;
        while let Some(Token::Phrase(..)) = self.tokens.get(self.at) {
            left = Expr::And(Box::new(left), Box::new(self.phrase()?));
        }
        Some(left)
    }

    fn phrase(&mut self) -> Option<Expr> {
        match self.tokens.get(self.at)? {
            Token::Phrase(text, prefix) => {
                let expr = Expr::Phrase {
                    text: text.clone(),
                    prefix: *prefix,
                };
                self.at += 1;
                Some(expr)
            }
            _ => None,
        }
    }
}

impl Expr {
    /// The phrases, left to right.
    pub fn phrases(&self) -> Vec<&str> {
        match self {
            Expr::Phrase { text, .. } => vec![text.as_str()],
            Expr::And(a, b) | Expr::Or(a, b) | Expr::Not(a, b) => {
                let mut all = a.phrases();
                all.extend(b.phrases());
                all
            }
        }
    }

    /// SQL for a `tsquery` of this tree; every phrase becomes a bound
    /// parameter (pushed on `params`), never SQL text.
    pub fn to_tsquery_sql(&self, params: &mut Vec<String>) -> String {
        match self {
            Expr::Phrase { text, prefix } => {
                params.push(text.clone());
                let n = params.len();
                let phrase = format!("phraseto_tsquery('simple', ${n}::TEXT)");
                if *prefix {
                    format!(
                        "(CASE WHEN numnode({phrase}) = 0 THEN {phrase} \
                         ELSE to_tsquery('simple', {phrase}::TEXT || ':*') END)"
                    )
                } else {
                    phrase
                }
            }
            Expr::And(a, b) => format!(
                "({} && {})",
                a.to_tsquery_sql(params),
                b.to_tsquery_sql(params)
            ),
            Expr::Or(a, b) => format!(
                "({} || {})",
                a.to_tsquery_sql(params),
                b.to_tsquery_sql(params)
            ),
            Expr::Not(a, b) => {
                format!(
                    "({} && !!{})",
                    a.to_tsquery_sql(params),
                    b.to_tsquery_sql(params)
                )
            }
        }
    }

    /// SQL for a boolean condition matching each phrase as a substring of
    /// `column` (case-insensitive), with the same operators; patterns are
    /// bound parameters.
    pub fn to_substring_sql(&self, column: &str, params: &mut Vec<String>) -> String {
        match self {
            Expr::Phrase { text, .. } => {
                params.push(format!("%{}%", escape_like(text)));
                format!("{column} ILIKE ${}::TEXT ESCAPE '\\'", params.len())
            }
            Expr::And(a, b) => format!(
                "({} AND {})",
                a.to_substring_sql(column, params),
                b.to_substring_sql(column, params)
            ),
            Expr::Or(a, b) => format!(
                "({} OR {})",
                a.to_substring_sql(column, params),
                b.to_substring_sql(column, params)
            ),
            Expr::Not(a, b) => format!(
                "({} AND NOT {})",
                a.to_substring_sql(column, params),
                b.to_substring_sql(column, params)
            ),
        }
    }
}

/// `text` with `\`, `%` and `_` escaped for `LIKE … ESCAPE '\'`.
pub fn escape_like(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '\\' | '%' | '_') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(text: &str, prefix: bool) -> Expr {
        Expr::Phrase {
            text: text.into(),
            prefix,
        }
    }

    #[test]
    fn precedence_is_fts5s() {
        use Expr::*;
        let b = Box::new;
        assert_eq!(
            parse("a b NOT c"),
            Some(Not(
                b(And(b(p("a", false)), b(p("b", false)))),
                b(p("c", false))
            ))
        );
        assert_eq!(
            parse("a OR b AND c"),
            Some(Or(
                b(p("a", false)),
                b(And(b(p("b", false)), b(p("c", false))))
            ))
        );
        assert_eq!(
            parse("\"chat-send\"* x"),
            Some(And(b(p("chat-send", true)), b(p("x", false))))
        );
        assert_eq!(parse("\"a\"\"b\""), Some(p("a\"b", false)));
        assert_eq!(parse("deploy*"), Some(p("deploy", true)));
        assert_eq!(parse("a AND"), None);
        assert_eq!(parse("50%"), None);
    }

    #[test]
    fn user_text_only_reaches_parameters() {
        let mut params = Vec::new();
        let sql = parse("\"a & b | !c\" OR x*")
            .unwrap()
            .to_tsquery_sql(&mut params);
        assert_eq!(params, ["a & b | !c", "x"]);
        assert!(!sql.contains('&') || !sql.contains("a & b"));
        assert!(!sql.contains("!c"));
    }
}
