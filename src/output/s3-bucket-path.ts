/**
 * The path of a path-style bucket request without its trailing '/': `/my-lake/?delete` becomes
 * `/my-lake?delete`. The AWS SDK sends bucket requests (ListObjectsV2, DeleteObjects, HeadBucket) to
 * `/{bucket}/` and signs that path; some S3-compatible servers (s3rver) sign `/{bucket}` instead and
 * answer SignatureDoesNotMatch. Both forms name the bucket on AWS S3, MinIO and Ceph, so the form every
 * server signs alike is sent. Requests with a `Key` (object requests, whose key may end in '/') and
 * virtual-hosted paths (`/`) are left alone.
 */
export function bucketPathWithoutSlash(path: string, bucket: string, input: object): string {
  const bucketRequest = !('Key' in input) && path.endsWith(`/${bucket}/`);
  return bucketRequest ? path.slice(0, -1) : path;
}
