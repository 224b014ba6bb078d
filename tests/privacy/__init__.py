"""recall/privacy/ and the controls: forget (and its crash points), the one gate, derived stores, no secret stored, re-redaction."""
