//! Every document of the index read back whole, with its vectors: what `quarry migrate` copies
//! into a team's index log, so the team's hosts search what the data folder held without
//! reading its sources or computing its vectors again.

use std::collections::HashMap;

use tantivy::collector::DocSetCollector;
use tantivy::{DocAddress, Searcher, TantivyDocument};

use crate::IndexError;
use crate::document::{IndexDoc, documents, term};
use crate::pending::{first_passages, whole};
use crate::schema::Fields;
use crate::vectors::{Embedding, unfinished_term};

/// The index's documents, one at a time, in no particular order.
pub struct Export {
    searcher: Searcher,
    fields: Fields,
    addresses: std::vec::IntoIter<DocAddress>,
    /// Per document with vectors (or a model that found none): the model, and whether every
    /// passage has its vector.
    models: HashMap<DocAddress, (String, bool)>,
}

impl Export {
    pub(crate) fn new(searcher: Searcher, fields: Fields) -> Result<Export, IndexError> {
        let mut models = HashMap::new();
        for model in model_terms(&searcher, &fields)? {
            let (name, complete) = match model.strip_suffix(&unfinished_term("")) {
                Some(name) => (name.to_owned(), false),
                None => (model.clone(), true),
            };
            for address in searcher.search(&*term(fields.model, &model), &DocSetCollector)? {
                models.insert(address, (name.clone(), complete));
            }
        }
        let mut addresses: Vec<DocAddress> = searcher
            .search(&*documents(), &DocSetCollector)?
            .into_iter()
            .collect();
        addresses.sort();
        Ok(Export {
            searcher,
            fields,
            addresses: addresses.into_iter(),
            models,
        })
    }

    fn read(&self, address: DocAddress) -> Result<Option<IndexDoc>, IndexError> {
        let stored: TantivyDocument = self.searcher.doc(address)?;
        let Some(doc) = IndexDoc::from_tantivy(&stored, &self.fields) else {
            return Ok(None);
        };
        let mut doc = whole(&self.searcher, &self.fields, address, &stored, doc, None)?.doc;
        if let Some((model, complete)) = self.models.get(&address) {
            let found = first_passages(&self.searcher, &self.fields, model, address, &stored)?;
            let embedding = found.unwrap_or_else(|| Embedding::new(model, Vec::new(), &[]));
            doc.embedding = Some(match complete {
                true => embedding.completed(),
                false => embedding.unfinished(),
            });
        }
        Ok(Some(doc))
    }
}

impl Iterator for Export {
    type Item = Result<IndexDoc, IndexError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let address = self.addresses.next()?;
            match self.read(address) {
                Ok(Some(doc)) => return Some(Ok(doc)),
                Ok(None) => continue,
                Err(e) => return Some(Err(e)),
            }
        }
    }
}

/// The model terms the index holds: models' ids, and those of documents whose first passages
/// alone have vectors.
fn model_terms(searcher: &Searcher, f: &Fields) -> Result<Vec<String>, IndexError> {
    let mut found = std::collections::BTreeSet::new();
    for segment in searcher.segment_readers() {
        let inverted = segment.inverted_index(f.model)?;
        let mut terms = inverted.terms().stream().map_err(|e| IndexError::Io {
            what: "reading the index's models",
            source: std::sync::Arc::new(e),
        })?;
        while terms.advance() {
            found.insert(String::from_utf8_lossy(terms.key()).into_owned());
        }
    }
    Ok(found.into_iter().collect())
}
