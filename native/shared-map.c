/*
 * Folio's one native function: a read-only shared memory mapping of the
 * start of a file, as an ArrayBuffer that JavaScript reads directly.
 *
 * The server maps the start of SQLite's `-shm` file (the WAL-index, which
 * every connection of every process maps and rewrites on each commit) to
 * read its header before each cached lookup without a system call
 * (src/store/sqlite/wal-index-header.ts). Node.js has no mmap of its own.
 *
 * map(fd, bytes) -> ArrayBuffer. The file must already be at least `bytes`
 * long: reading a mapped page past the end of its file stops the process
 * (SIGBUS). The mapping is removed when the ArrayBuffer is collected.
 */
#define NAPI_VERSION 8
#include <node_api.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

static void unmap(napi_env env, void *data, void *hint) {
  (void)env;
  munmap(data, (size_t)(uintptr_t)hint);
}

static napi_value map_file(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  int32_t fd = -1;
  int32_t bytes = 0;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc != 2 ||
      napi_get_value_int32(env, argv[0], &fd) != napi_ok || napi_get_value_int32(env, argv[1], &bytes) != napi_ok ||
      fd < 0 || bytes <= 0) {
    napi_throw_type_error(env, NULL, "map(fd, bytes) takes a file descriptor and a positive length");
    return NULL;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    napi_throw_error(env, NULL, strerror(errno));
    return NULL;
  }
  if (st.st_size < bytes) {
    napi_throw_range_error(env, NULL, "the file is shorter than the mapping");
    return NULL;
  }
  void *at = mmap(NULL, (size_t)bytes, PROT_READ, MAP_SHARED, fd, 0);
  if (at == MAP_FAILED) {
    napi_throw_error(env, NULL, strerror(errno));
    return NULL;
  }
  napi_value buffer;
  if (napi_create_external_arraybuffer(env, at, (size_t)bytes, unmap, (void *)(uintptr_t)bytes, &buffer) != napi_ok) {
    munmap(at, (size_t)bytes);
    napi_throw_error(env, NULL, "could not wrap the mapping in an ArrayBuffer");
    return NULL;
  }
  return buffer;
}

static napi_value init(napi_env env, napi_value exports) {
  napi_value fn;
  if (napi_create_function(env, "map", NAPI_AUTO_LENGTH, map_file, NULL, &fn) != napi_ok ||
      napi_set_named_property(env, exports, "map", fn) != napi_ok) {
    return NULL;
  }
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
