//! Criterion benches (one target, modules per area). Filled in as the parts land.
use criterion::{Criterion, criterion_group, criterion_main};

fn tokenizing(c: &mut Criterion) {
    let text = "Create a new issue in a repository. ".repeat(20);
    c.bench_function("tokenize/description", |b| {
        b.iter(|| toolbudget::tokenize::Tokenizer::O200kBase.count(std::hint::black_box(&text)))
    });
}

criterion_group!(benches, tokenizing);
criterion_main!(benches);
