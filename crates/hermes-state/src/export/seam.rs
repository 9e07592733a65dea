//! The export and import methods of the `SessionStore` seam, for both
//! backends: each forwards to the store's own methods of the same names
//! (`SessionDb`'s here, `PgStore`'s in the PostgreSQL crate), which run the
//! contract crate's codecs over the backend's snapshot and writer. Invoked
//! inside each `impl SessionStore` block.

/// The methods: the store's own, with the seam's `dyn` arguments.
macro_rules! sqlite_export_methods {
    () => {
        fn export_session(&self, session_id: &str) -> Result<Option<SessionExport>> {
            Self::export_session(self, session_id)
        }
        fn export_session_lineage(&self, session_id: &str) -> Result<Option<LineageExport>> {
            Self::export_session_lineage(self, session_id)
        }
        fn export_session_parts(
            &self,
            session_id: &str,
            each: &mut dyn FnMut(ExportPart) -> ControlFlow<()>,
        ) -> Result<bool> {
            Self::export_session_parts(self, session_id, each)
        }
        fn export_all(&self, source: Option<&str>) -> Result<Vec<SessionExport>> {
            Self::export_all(self, source)
        }
        fn export_all_each(
            &self,
            source: Option<&str>,
            each: &mut dyn FnMut(SessionExport) -> ControlFlow<()>,
        ) -> Result<u64> {
            Self::export_all_each(self, source, each)
        }
        fn export_all_parts(
            &self,
            source: Option<&str>,
            each: &mut dyn FnMut(ExportPart) -> ControlFlow<()>,
        ) -> Result<u64> {
            Self::export_all_parts(self, source, each)
        }
        fn export_jsonl(
            &self,
            writer: &mut dyn Write,
            filter: &ExportFilter,
            progress: &mut dyn FnMut(u64),
        ) -> Result<ExportSummary> {
            Self::export_jsonl(self, writer, filter, progress)
        }
        fn walk_messages(
            &self,
            session_id: &str,
            include_inactive: bool,
            count: &mut dyn FnMut(u64) -> ControlFlow<()>,
            each: &mut dyn FnMut(Message) -> ControlFlow<()>,
        ) -> Result<u64> {
            Self::walk_messages(self, session_id, include_inactive, count, each)
        }
        fn import_jsonl(
            &self,
            reader: &mut dyn BufRead,
            options: &ImportOptions,
            progress: &mut dyn FnMut(u64),
        ) -> Result<ImportReport> {
            Self::import_jsonl(self, reader, options, progress)
        }
        fn import_sessions(&self, sessions: &Value) -> Result<SessionsImportReport> {
            Self::import_sessions(self, sessions)
        }
    };
}

#[cfg(feature = "postgres")]
pub(crate) use sqlite_export_methods as postgres_export_methods;
pub(crate) use sqlite_export_methods;
