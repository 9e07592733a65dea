//! FTS5's expression parser (`fts5parse.y` and the checks of its reduce
//! actions), reduced to what decides whether a query is accepted, and to
//! the first error SQLite would report.

use super::Fts5SyntaxError;
use super::unicode61::has_token_char;

type Result<T> = std::result::Result<T, Fts5SyntaxError>;

/// A state the verbatim lemon tables never produce (a value of the wrong
/// kind on the stack, an index out of a table). Reported as a syntax error,
/// so that the checker never accepts a query it could not follow.
fn broken() -> Fts5SyntaxError {
    Fts5SyntaxError::SyntaxErrorNear(String::new())
}

/// The columns of `messages_fts`, for column filters.
const COLUMNS: [&str; 3] = ["content", "tool_name", "tool_calls"];
/// `SQLITE_FTS5_MAX_EXPR_DEPTH`.
const MAX_EXPR_DEPTH: u32 = 256;

// Terminal codes of fts5parse.y (`FTS5_*` in sqlite3.c).
const EOF: u8 = 0;
const OR: u8 = 1;
const AND: u8 = 2;
const NOT: u8 = 3;
const COLON: u8 = 5;
const MINUS: u8 = 6;
const LCP: u8 = 7;
const RCP: u8 = 8;
const STRING: u8 = 9;
const LP: u8 = 10;
const RP: u8 = 11;
const CARET: u8 = 12;
const COMMA: u8 = 13;
const PLUS: u8 = 14;
const STAR: u8 = 15;

// The lemon parser tables of fts5parse.y, copied verbatim from the
// bundled sqlite3.c 3.54.1 (`fts5yy_action` … `fts5yyRuleInfoNRhs`).
// Copying them, rather than writing a parser by hand, reproduces
// lemon's conflict resolution and stack use exactly.
#[rustfmt::skip]
const YY_ACTION: [u8; 105] = [
    81, 20, 96, 6, 28, 99, 98, 26, 26, 18, 96, 6, 28, 17, 98, 56, 26, 19, 96, 6,
    28, 14, 98, 14, 26, 31, 92, 96, 6, 28, 108, 98, 25, 26, 21, 96, 6, 28, 78, 98,
    58, 26, 29, 96, 6, 28, 107, 98, 22, 26, 24, 16, 12, 11, 1, 13, 13, 24, 16, 23,
    11, 33, 34, 13, 97, 8, 27, 32, 98, 7, 26, 3, 4, 5, 3, 4, 5, 3, 83, 4,
    5, 3, 63, 5, 3, 62, 12, 2, 86, 13, 9, 30, 10, 10, 54, 57, 75, 78, 78, 53,
    57, 15, 82, 82, 71,
];
#[rustfmt::skip]
const YY_LOOKAHEAD: [u8; 121] = [
    16, 17, 18, 19, 20, 22, 22, 24, 24, 17, 18, 19, 20, 7, 22, 9, 24, 17, 18, 19,
    20, 9, 22, 9, 24, 13, 17, 18, 19, 20, 26, 22, 24, 24, 17, 18, 19, 20, 15, 22,
    9, 24, 17, 18, 19, 20, 26, 22, 21, 24, 6, 7, 9, 9, 10, 12, 12, 6, 7, 21,
    9, 24, 25, 12, 18, 5, 20, 14, 22, 5, 24, 3, 1, 2, 3, 1, 2, 3, 0, 1,
    2, 3, 11, 2, 3, 11, 9, 10, 5, 12, 23, 24, 10, 10, 8, 9, 9, 15, 15, 8,
    9, 9, 27, 27, 11, 27, 27, 27, 27, 27, 27, 27, 27, 27, 27, 27, 27, 27, 27, 27,
    27,
];
#[rustfmt::skip]
const YY_SHIFT_OFST: [u8; 35] = [
    44, 44, 44, 44, 44, 44, 51, 77, 43, 12, 14, 83, 82, 14, 23, 23, 31, 31, 71, 74,
    78, 81, 86, 91, 6, 53, 53, 60, 64, 68, 53, 87, 92, 53, 93,
];
#[rustfmt::skip]
const YY_REDUCE_OFST: [i8; 18] = [
    -16, -8, 0, 9, 17, 25, 46, -17, -17, 37, 67, 4, 4, 8, 4, 20, 27, 38,
];
#[rustfmt::skip]
const YY_DEFAULT: [u8; 35] = [
    80, 80, 80, 80, 80, 80, 95, 80, 80, 105, 80, 110, 110, 80, 110, 110, 80, 80, 80, 80,
    80, 91, 80, 80, 80, 101, 100, 80, 80, 90, 103, 80, 80, 104, 80,
];
/// Left-hand-side symbol of each rule.
#[rustfmt::skip]
const RULE_LHS: [u8; 28] = [
    16, 20, 20, 20, 20, 21, 21, 17, 17, 17, 17, 17, 17, 19, 19, 18, 18, 22, 22, 22,
    23, 23, 25, 25, 24, 24, 26, 26,
];
/// Number of right-hand-side symbols of each rule.
#[rustfmt::skip]
const RULE_NRHS: [u8; 28] = [
    1, 4, 3, 1, 2, 2, 1, 3, 3, 3, 5, 3, 1, 1, 2, 1, 3, 1, 2, 5,
    1, 2, 0, 2, 4, 2, 1, 0,
];
const MAX_SHIFT: u8 = 34;
const MIN_SHIFTREDUCE: u8 = 52;
const MAX_SHIFTREDUCE: u8 = 79;
const ACCEPT_ACTION: u8 = 81;
const MIN_REDUCE: u8 = 83;
/// `fts5YYSTACKDEPTH`; the stack does not grow (`fts5YYDYNSTACK 0`).
const STACK_DEPTH: usize = 100;

/// An expression node, as far as acceptance depends on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A phrase or NEAR group (`FTS5_STRING`/`FTS5_TERM`); `eof` when it
    /// holds an empty phrase, which FTS5 turns into `FTS5_EOF`.
    Leaf {
        eof: bool,
    },
    And,
    Or,
    Not,
}

#[derive(Debug, Clone, Copy)]
struct Node {
    kind: Kind,
    /// `Fts5ExprNode.iHeight`.
    height: u32,
    /// For `And`: whether its last child is an empty leaf
    /// (`sqlite3Fts5ParseImplicitAnd` looks at it).
    last_child_eof: bool,
}

impl Node {
    fn leaf(eof: bool) -> Self {
        Node {
            kind: Kind::Leaf { eof },
            height: 0,
            last_child_eof: false,
        }
    }

    fn is_eof(&self) -> bool {
        self.kind == Kind::Leaf { eof: true }
    }
}

/// Semantic values on the parser stack.
#[derive(Debug)]
enum Value<'a> {
    None,
    Token(&'a str),
    Colset,
    Expr(Node),
    /// A NEAR group: whether each of its phrases is empty.
    Nearset(Vec<bool>),
    /// A phrase: whether it is empty (no token at all).
    Phrase(bool),
}

impl<'a> Value<'a> {
    fn token(self) -> Result<&'a str> {
        match self {
            Value::Token(text) => Ok(text),
            _ => Err(broken()),
        }
    }

    fn expr(self) -> Result<Node> {
        match self {
            Value::Expr(node) => Ok(node),
            _ => Err(broken()),
        }
    }

    fn nearset(self) -> Result<Vec<bool>> {
        match self {
            Value::Nearset(phrases) => Ok(phrases),
            _ => Err(broken()),
        }
    }

    fn phrase(self) -> Result<bool> {
        match self {
            Value::Phrase(empty) => Ok(empty),
            _ => Err(broken()),
        }
    }
}

/// Parses a NUL-free query that does not start with `*`.
pub(super) fn parse(query: &str) -> Result<()> {
    let mut parser = Parser {
        stack: vec![(0, Value::None)],
    };
    let mut rest = query;
    loop {
        let (major, text) = next_token(&mut rest)?;
        if parser.feed(major, text)? {
            return Ok(());
        }
        if major == EOF {
            return Err(broken());
        }
    }
}

/// `fts5ExprGetToken`: the next token and its text.
fn next_token<'a>(rest: &mut &'a str) -> Result<(u8, &'a str)> {
    let text = rest.trim_start_matches([' ', '\t', '\n', '\r']);
    let bytes = text.as_bytes();
    let Some(&first) = bytes.first() else {
        *rest = text;
        return Ok((EOF, text));
    };
    let (major, len) = match first {
        b'(' => (LP, 1),
        b')' => (RP, 1),
        b'{' => (LCP, 1),
        b'}' => (RCP, 1),
        b':' => (COLON, 1),
        b',' => (COMMA, 1),
        b'+' => (PLUS, 1),
        b'*' => (STAR, 1),
        b'-' => (MINUS, 1),
        b'^' => (CARET, 1),
        b'"' => {
            // `""` inside a string is an escaped quote.
            let mut i = 1;
            loop {
                match bytes.get(i) {
                    None => return Err(Fts5SyntaxError::UnterminatedString),
                    Some(b'"') if bytes.get(i + 1) == Some(&b'"') => i += 2,
                    Some(b'"') => break (STRING, i + 1),
                    Some(_) => i += 1,
                }
            }
        }
        _ if is_bareword_byte(first) => {
            let len = bytes.iter().take_while(|&&b| is_bareword_byte(b)).count();
            let major = match &bytes[..len] {
                b"OR" => OR,
                b"NOT" => NOT,
                b"AND" => AND,
                _ => STRING,
            };
            (major, len)
        }
        _ => {
            // Not a bareword byte, so ASCII: one byte is one character.
            let near = text.get(..1).unwrap_or_default().to_owned();
            return Err(Fts5SyntaxError::SyntaxErrorNear(near));
        }
    };
    // Every token ends before an ASCII byte or at the end: a char boundary.
    let (token, after) = text.split_at_checked(len).ok_or_else(broken)?;
    *rest = after;
    Ok((major, token))
}

/// `sqlite3Fts5IsBareword`: non-ASCII bytes, ASCII letters and digits,
/// `_` and U+001A.
fn is_bareword_byte(b: u8) -> bool {
    b >= 0x80 || b.is_ascii_alphanumeric() || b == b'_' || b == 0x1a
}

/// The lemon driver (`sqlite3Fts5Parser` with `fts5YYNOERRORRECOVERY`).
struct Parser<'a> {
    /// `(state or pending reduce action, semantic value)`.
    stack: Vec<(u8, Value<'a>)>,
}

impl<'a> Parser<'a> {
    /// Feeds one token; `Ok(true)` once the input is accepted.
    fn feed(&mut self, major: u8, text: &'a str) -> Result<bool> {
        let mut action = self.stack.last().ok_or_else(broken)?.0;
        loop {
            action = find_shift_action(major, action)?;
            if action >= MIN_REDUCE {
                let rule = usize::from(action - MIN_REDUCE);
                let empty_rule = *RULE_NRHS.get(rule).ok_or_else(broken)? == 0;
                if empty_rule && self.stack.len() >= STACK_DEPTH {
                    return Err(Fts5SyntaxError::ParserStackOverflow);
                }
                action = self.reduce(rule)?;
            } else if action <= MAX_SHIFTREDUCE {
                if self.stack.len() >= STACK_DEPTH {
                    return Err(Fts5SyntaxError::ParserStackOverflow);
                }
                let state = if action > MAX_SHIFT {
                    action + (MIN_REDUCE - MIN_SHIFTREDUCE)
                } else {
                    action
                };
                self.stack.push((state, Value::Token(text)));
                return Ok(false);
            } else if action == ACCEPT_ACTION {
                return Ok(true);
            } else {
                return Err(Fts5SyntaxError::SyntaxErrorNear(text.to_owned()));
            }
        }
    }

    /// `fts5yy_reduce`: pops the rule's right-hand side, runs the checks
    /// of its action and pushes the left-hand side.
    fn reduce(&mut self, rule: usize) -> Result<u8> {
        let n = usize::from(*RULE_NRHS.get(rule).ok_or_else(broken)?);
        let base = self.stack.len().checked_sub(n).ok_or_else(broken)?;
        let rhs: Vec<Value<'a>> = self.stack.drain(base..).map(|(_, value)| value).collect();
        let value = reduce_action(rule, rhs)?;
        let below = self.stack.last().ok_or_else(broken)?.0;
        let lhs = *RULE_LHS.get(rule).ok_or_else(broken)?;
        let action = find_reduce_action(below, lhs)?;
        self.stack.push((action, value));
        Ok(action)
    }
}

/// `fts5yy_find_shift_action`.
fn find_shift_action(lookahead: u8, state: u8) -> Result<u8> {
    if state > MAX_SHIFT {
        return Ok(state);
    }
    let offset = *YY_SHIFT_OFST.get(usize::from(state)).ok_or_else(broken)?;
    let i = usize::from(offset) + usize::from(lookahead);
    if YY_LOOKAHEAD.get(i) == Some(&lookahead) {
        YY_ACTION.get(i).copied().ok_or_else(broken)
    } else {
        YY_DEFAULT
            .get(usize::from(state))
            .copied()
            .ok_or_else(broken)
    }
}

/// `fts5yy_find_reduce_action`.
fn find_reduce_action(state: u8, lhs: u8) -> Result<u8> {
    let offset = *YY_REDUCE_OFST.get(usize::from(state)).ok_or_else(broken)?;
    let i = usize::try_from(i16::from(offset) + i16::from(lhs)).map_err(|_| broken())?;
    YY_ACTION.get(i).copied().ok_or_else(broken)
}

/// The reduce actions of fts5parse.y, keeping only what can fail.
fn reduce_action<'a>(rule: usize, rhs: Vec<Value<'a>>) -> Result<Value<'a>> {
    let mut rhs = rhs.into_iter();
    let mut next = || rhs.next().ok_or_else(broken);
    Ok(match rule {
        // input ::= expr
        0 => Value::None,
        // colset ::= MINUS LCP colsetlist RCP | LCP colsetlist RCP
        1 | 2 => Value::Colset,
        // colset ::= STRING | MINUS STRING ; colsetlist ::= colsetlist STRING | STRING
        3..=6 => {
            if rule == 4 || rule == 5 {
                next()?;
            }
            check_column(next()?.token()?)?;
            Value::Colset
        }
        // expr ::= expr AND|OR|NOT expr
        7..=9 => {
            let left = next()?.expr()?;
            next()?;
            let right = next()?.expr()?;
            let kind = match rule {
                7 => Kind::And,
                8 => Kind::Or,
                _ => Kind::Not,
            };
            Value::Expr(combine(kind, left, right)?)
        }
        // expr ::= colset COLON LP expr RP
        10 => {
            next()?;
            next()?;
            next()?;
            Value::Expr(next()?.expr()?)
        }
        // expr ::= LP expr RP
        11 => {
            next()?;
            Value::Expr(next()?.expr()?)
        }
        // expr ::= exprlist ; exprlist ::= cnearset
        12 | 13 => Value::Expr(next()?.expr()?),
        // exprlist ::= exprlist cnearset
        14 => {
            let left = next()?.expr()?;
            let right = next()?.expr()?;
            Value::Expr(implicit_and(left, right)?)
        }
        // cnearset ::= nearset | colset COLON nearset
        15 | 16 => {
            if rule == 16 {
                next()?;
                next()?;
            }
            let phrases = next()?.nearset()?;
            Value::Expr(Node::leaf(phrases.iter().any(|&empty| empty)))
        }
        // nearset ::= phrase | CARET phrase ; nearphrases ::= phrase
        17 | 18 | 20 => {
            if rule == 18 {
                next()?;
            }
            Value::Nearset(vec![next()?.phrase()?])
        }
        // nearset ::= STRING LP nearphrases neardist_opt RP
        19 => {
            let near = next()?.token()?;
            if near != "NEAR" {
                return Err(Fts5SyntaxError::SyntaxErrorNear(near.to_owned()));
            }
            next()?;
            let phrases = next()?.nearset()?;
            let distance = next()?.token()?;
            if !distance.bytes().all(|b| b.is_ascii_digit()) {
                return Err(Fts5SyntaxError::ExpectedInteger(distance.to_owned()));
            }
            Value::Nearset(phrases)
        }
        // nearphrases ::= nearphrases phrase
        21 => {
            let mut phrases = next()?.nearset()?;
            let empty = next()?.phrase()?;
            add_phrase(&mut phrases, empty);
            Value::Nearset(phrases)
        }
        // neardist_opt ::= (empty)
        22 => Value::Token(""),
        // neardist_opt ::= COMMA STRING
        23 => {
            next()?;
            Value::Token(next()?.token()?)
        }
        // phrase ::= phrase PLUS STRING star_opt
        24 => {
            let empty = next()?.phrase()?;
            next()?;
            let text = next()?.token()?;
            Value::Phrase(empty && !has_token_char(text))
        }
        // phrase ::= STRING star_opt
        25 => Value::Phrase(!has_token_char(next()?.token()?)),
        // star_opt ::= STAR | (empty)
        26 | 27 => Value::None,
        _ => return Err(broken()),
    })
}

/// `sqlite3Fts5ParseColset`: the (dequoted) name must be a column.
fn check_column(token: &str) -> Result<()> {
    let name = dequote(token);
    if COLUMNS
        .iter()
        .any(|column| column.eq_ignore_ascii_case(&name))
    {
        Ok(())
    } else {
        Err(Fts5SyntaxError::NoSuchColumn(name))
    }
}

/// `sqlite3Fts5Dequote` for FTS5 tokens: only `"…"` strings are quoted.
fn dequote(token: &str) -> String {
    match token.strip_prefix('"') {
        Some(inner) => inner
            .strip_suffix('"')
            .unwrap_or(inner)
            .replace("\"\"", "\""),
        None => token.to_owned(),
    }
}

/// `sqlite3Fts5ParseNearset` adding a phrase to a group: an empty
/// phrase after another is dropped, and an empty last phrase is
/// replaced by a non-empty one.
fn add_phrase(phrases: &mut Vec<bool>, empty: bool) {
    match phrases.last_mut() {
        Some(_) if empty => {}
        Some(last) if *last => *last = false,
        _ => phrases.push(empty),
    }
}

/// `sqlite3Fts5ParseNode` for AND/OR/NOT: AND and OR absorb children of
/// their own kind, NOT never does; deeper than
/// [`MAX_EXPR_DEPTH`] is an error.
fn combine(kind: Kind, left: Node, right: Node) -> Result<Node> {
    let merges = |child: &Node| kind != Kind::Not && child.kind == kind;
    let contribution = |child: &Node| {
        if merges(child) {
            child.height
        } else {
            child.height.saturating_add(1)
        }
    };
    let height = contribution(&left).max(contribution(&right));
    if height > MAX_EXPR_DEPTH {
        return Err(Fts5SyntaxError::TooDeep {
            max_depth: MAX_EXPR_DEPTH,
        });
    }
    let last_child_eof = if merges(&right) {
        right.last_child_eof
    } else {
        right.is_eof()
    };
    Ok(Node {
        kind,
        height,
        last_child_eof,
    })
}

/// `sqlite3Fts5ParseImplicitAnd` (`a b`): an empty right phrase is
/// dropped, an empty left one is replaced, otherwise an AND node.
fn implicit_and(left: Node, right: Node) -> Result<Node> {
    let previous_eof = match left.kind {
        Kind::And => left.last_child_eof,
        _ => left.is_eof(),
    };
    if right.is_eof() {
        Ok(left)
    } else if previous_eof {
        if left.kind == Kind::And {
            Ok(Node {
                last_child_eof: right.is_eof(),
                ..left
            })
        } else {
            Ok(right)
        }
    } else {
        combine(Kind::And, left, right)
    }
}
