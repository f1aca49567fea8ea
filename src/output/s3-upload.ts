import { createReadStream } from 'node:fs';
import { stat, unlink } from 'node:fs/promises';
import { AbortMultipartUploadCommand } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { OutputError } from '../errors.js';
import { crashPoint } from '../util/crash-point.js';
import type { Bucket } from './s3-bucket.js';
import { errorCode } from './s3-errors.js';

/** S3's limit of parts per multipart upload: the part size grows for files that would need more. */
const MAX_PARTS = 10_000;

/**
 * Uploads the local file `localPath` to `key` (multipart past one part), resolved only after the
 * upload is complete; then deletes the local file. On failure the upload is aborted (best effort).
 */
export async function publishFile(at: Bucket, localPath: string, key: string): Promise<void> {
  const started = performance.now();
  const bytes = await localSize(at, localPath, key);
  const uploadId = await upload(at, localPath, bytes, key);
  try {
    await unlink(localPath);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new OutputError(`Published ${at.url(key)} but could not delete ${localPath} (${errorCode(error)}).`, {
        cause: error,
      });
    }
  }
  const ms = Math.round(performance.now() - started);
  at.log.debug({ key, bytes, multipart: uploadId !== undefined, ms }, 'file published');
}

async function localSize(at: Bucket, localPath: string, key: string): Promise<number> {
  try {
    return (await stat(localPath)).size;
  } catch (error) {
    throw new OutputError(`Publishing ${localPath} to ${at.url(key)} failed: cannot read the local file (${errorCode(error)}).`, {
      cause: error,
    });
  }
}

/** Uploads a local file whole (multipart when past one part); resolves to its upload id, if multipart. */
async function upload(at: Bucket, localPath: string, bytes: number, key: string): Promise<string | undefined> {
  const body = createReadStream(localPath);
  const upload = new Upload({
    client: at.client,
    params: { Bucket: at.bucket, Key: at.root + key, Body: body, ContentLength: bytes },
    partSize: Math.max(at.partSize, Math.ceil(bytes / MAX_PARTS)),
    queueSize: at.queueSize,
    // We abort ourselves: lib-storage's own abort would replace the cause with the abort's error.
    leavePartsOnError: true,
  });
  // Fires as each part is received: the upload is not complete yet (crash tests stop here).
  upload.on('httpUploadProgress', () => crashPoint('after-upload-part'));
  try {
    await upload.done();
    return upload.uploadId;
  } catch (error) {
    await abortUpload(at, upload.uploadId, key);
    throw at.fail('upload', key, error);
  } finally {
    body.destroy();
  }
}

async function abortUpload(at: Bucket, uploadId: string | undefined, key: string): Promise<void> {
  if (uploadId === undefined) return;
  try {
    const abort = new AbortMultipartUploadCommand({ Bucket: at.bucket, Key: at.root + key, UploadId: uploadId });
    await at.client.send(abort);
  } catch (error) {
    // Best effort: the parts stay (invisible, but stored) until an AbortIncompleteMultipartUpload rule
    // of the bucket's lifecycle removes them. The publish failed either way and reports its own error.
    at.log.warn({ key, uploadId, s3Code: errorCode(error) }, 'could not abort the multipart upload');
  }
}
