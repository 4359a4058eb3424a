// libcurl for AssetDelivery's HTTP client.
//
// `curl_easy_setopt` and `curl_easy_getinfo` are variadic, and Swift cannot
// call a variadic C function: these helpers fix one argument type each.
// Each returns what the wrapped call returns (`CURLE_OK`, or the error).
#include <curl/curl.h>

/// `curl_easy_setopt(handle, option, value)` for an option that takes a `long`.
static inline CURLcode cas_curl_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

/// `curl_easy_setopt(handle, option, value)` for a `curl_off_t` option
/// (`CURLOPT_MAX_RECV_SPEED_LARGE`, `CURLOPT_RESUME_FROM_LARGE`).
static inline CURLcode cas_curl_setopt_offset(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

/// `curl_easy_setopt(handle, option, value)` for a string option; libcurl
/// copies the string (`NULL` resets the option).
static inline CURLcode cas_curl_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

/// `curl_easy_setopt(handle, option, value)` for a pointer option
/// (`CURLOPT_WRITEDATA`, `CURLOPT_HEADERDATA`, `CURLOPT_HTTPHEADER`).
static inline CURLcode cas_curl_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

/// `curl_easy_setopt(handle, option, &blob)` for a blob option
/// (`CURLOPT_CAINFO_BLOB`): `length` bytes at `data`, which libcurl copies
/// (`CURL_BLOB_COPY`), so they need not outlive the call.
static inline CURLcode cas_curl_setopt_blob(CURL *handle, CURLoption option, const void *data, size_t length) {
    struct curl_blob blob = { (void *)data, length, CURL_BLOB_COPY };
    return curl_easy_setopt(handle, option, &blob);
}

/// The shape of `CURLOPT_WRITEFUNCTION` and `CURLOPT_HEADERFUNCTION`.
typedef size_t (*cas_curl_data_callback)(char *data, size_t size, size_t count, void *context);

/// `curl_easy_setopt(handle, option, callback)` for `CURLOPT_WRITEFUNCTION`
/// or `CURLOPT_HEADERFUNCTION`.
static inline CURLcode cas_curl_setopt_callback(CURL *handle, CURLoption option, cas_curl_data_callback callback) {
    return curl_easy_setopt(handle, option, callback);
}

/// `curl_easy_getinfo(handle, info, &value)` for a `long` item
/// (`CURLINFO_RESPONSE_CODE`).
static inline CURLcode cas_curl_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

/// `curl_easy_getinfo(handle, info, &value)` for a `curl_off_t` item
/// (`CURLINFO_SIZE_DOWNLOAD_T`).
static inline CURLcode cas_curl_getinfo_offset(CURL *handle, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(handle, info, value);
}

/// The shape of `CURLOPT_XFERINFOFUNCTION`: non-zero stops the transfer.
typedef int (*cas_curl_progress_callback)(void *context, curl_off_t download_total, curl_off_t download_now,
                                          curl_off_t upload_total, curl_off_t upload_now);

/// `curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, callback)`.
static inline CURLcode cas_curl_setopt_progress(CURL *handle, cas_curl_progress_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, callback);
}

/// One message of `curl_multi_info_read`: when it says a transfer is done,
/// stores its easy handle and result and returns 1; else returns 0. (The
/// result sits in a union, which Swift reads awkwardly.)
static inline int cas_curl_multi_done(const CURLMsg *message, CURL **handle, CURLcode *result) {
    if (message == NULL || message->msg != CURLMSG_DONE) return 0;
    *handle = message->easy_handle;
    *result = message->data.result;
    return 1;
}
