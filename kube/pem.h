// Decoding and checking the credentials a kubeconfig carries: base64 (the *-data fields) and
// PEM certificates and keys, read with OpenSSL. Messages say what is wrong, not where: the
// caller adds the file and field.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace hcashare::kube {

// Standard base64 (RFC 4648 alphabet, '=' padding required, as Go's decoder does;
// whitespace ignored).
// InvalidArgument on any other byte or a bad length.
Result<std::string> DecodeBase64(std::string_view text);

// Standard base64 with '=' padding (OpenSSL's encoder).
std::string EncodeBase64(std::string_view bytes);

// OK when `pem` holds at least one PEM certificate and nothing that fails to parse as one.
// Returns how many certificates it holds.
Result<int> CountPemCertificates(const std::string& pem);

// OK when `pem` holds a private key OpenSSL can read (RSA, EC, Ed25519; PKCS#1 or #8).
Status CheckPemPrivateKey(const std::string& pem);

}  // namespace hcashare::kube
