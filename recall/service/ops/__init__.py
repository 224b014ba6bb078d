"""The service's ops, one module per feature; ``recall.service.registry.OP_MODULES`` lists them."""
