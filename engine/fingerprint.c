/* SHA-256 fingerprints of module files: shown in listings so an administrator
 * can tell exactly which build is loaded, and the basis of the selector's
 * configuration signature. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "engine/loader.h"

int mpce_file_sha256(const char *path, char hex[65], char *why, size_t why_len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, why_len, "cannot open for fingerprinting: %s", strerror(errno));
        return -1;
    }
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    int ok = md && EVP_DigestInit_ex(md, EVP_sha256(), NULL) == 1;
    unsigned char buf[65536];
    ssize_t got;
    while (ok && (got = read(fd, buf, sizeof(buf))) != 0) {
        if (got < 0) {
            if (errno == EINTR)
                continue;
            snprintf(why, why_len, "read failed while fingerprinting: %s", strerror(errno));
            ok = -1;
            break;
        }
        ok = EVP_DigestUpdate(md, buf, (size_t)got) == 1;
    }
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned dlen = 0;
    if (ok == 1)
        ok = EVP_DigestFinal_ex(md, digest, &dlen) == 1 && dlen == 32;
    EVP_MD_CTX_free(md);
    close(fd);
    if (ok != 1) {
        if (ok == 0)
            snprintf(why, why_len, "OpenSSL SHA-256 failed: check the libcrypto installation");
        return -1;
    }
    for (unsigned i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", digest[i]);
    return 0;
}
