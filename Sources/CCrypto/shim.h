#include <openssl/sha.h>
// Ed25519 keys, signing and verification for catalogs (AssetDelivery).
#include <openssl/evp.h>
#include <openssl/rand.h>
