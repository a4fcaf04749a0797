{
  "targets": [
    {
      "target_name": "folio_shared_map",
      "sources": ["native/shared-map.c"]
    }
  ]
}
