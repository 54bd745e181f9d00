// The package's version (tests/js checks it equals package.json's).
export const version = '0.1.0';
